package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"

	"github.com/hangarhq/hangar/internal/usertext"
	"github.com/hangarhq/hangar/store"
)

// BlogViews counts and reads page views.
type BlogViews interface {
	RecordView(h store.Hit) (store.ViewResult, error)
	ViewTotals(slugs []string) (map[string]uint64, error)
}

// BlogComments keeps comments and the per-IP write allowance.
type BlogComments interface {
	CommentsPage(slug string, after uint64, limit, maxBytes int) (page []store.Comment, more bool, err error)
	AddComment(c store.NewComment) (store.Comment, error)
	EditComment(slug string, id uint64, password, content string) (store.Comment, error)
	DeleteComment(slug string, id uint64, password string) error
	AllowBlogWrite(ip string) (ok bool, retryAfter time.Duration, err error)
}

// BlogInquiries keeps contact-form messages.
type BlogInquiries interface {
	AddInquiry(q store.Inquiry) (store.Inquiry, error)
}

// BlogAdmin is what the blog admin API reads and deletes.
type BlogAdmin interface {
	BlogStats(top, days, recent int) (store.BlogStats, error)
	AdminComments(limit int, before uint64) ([]store.Comment, error)
	AdminDeleteComment(id uint64) error
	Inquiries(limit int, before uint64) ([]store.Inquiry, error)
	Slugs(prefix, after string, limit int) ([]store.SlugViews, error)
	SlugCount() (uint64, error)
	DeleteSlug(slug string) (uint64, error)
	DeleteSlugs(prefix string, maxViews uint64) (deleted int, more bool, err error)
}

// Blog is everything the blog API needs (seed 004).
type Blog interface {
	BlogViews
	BlogComments
	BlogInquiries
	BlogAdmin
	BlogModeration
}

var _ Blog = (*store.Store)(nil)

// BlogConfig holds the blog API settings.
type BlogConfig struct {
	// ClientIPHeader names a header set by a trusted proxy (CF-Connecting-IP,
	// X-Forwarded-For) that carries the client IP; empty uses the socket address. Only
	// set it behind a proxy that overwrites the header, or clients choose their IP.
	ClientIPHeader string
	// Geo headers; empty names take Cloudflare's.
	CountryHeader string
	CityHeader    string
	LatHeader     string
	LonHeader     string
	// CORSOrigins are the blog origins allowed to call /api/* from a browser.
	CORSOrigins []string
}

const (
	maxSlugsPerRequest = 100
	statsTopSlugs      = 20
	statsDays          = 30
	statsRecent        = 100
	commentsPerPage    = 1000
	// commentsPageBytes bounds the names and content of one page of comments: 43
	// comments of 2,000 Hangul syllables, or the 1,000 of a page of short ones.
	commentsPageBytes = 256 << 10
)

func (c *BlogConfig) defaults() {
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&c.CountryHeader, "CF-IPCountry")
	def(&c.CityHeader, "CF-IPCity")
	def(&c.LatHeader, "CF-IPLatitude")
	def(&c.LonHeader, "CF-IPLongitude")
}

// blogRoutes registers the blog API under /api when a Blog is wired.
func (s *Server) blogRoutes() {
	if s.deps.Blog == nil {
		return
	}
	s.cfg.Blog.defaults()
	var mw []fiber.Handler
	if len(s.cfg.Blog.CORSOrigins) > 0 {
		mw = append(mw, cors.New(cors.Config{
			AllowOrigins: strings.Join(s.cfg.Blog.CORSOrigins, ","),
			AllowMethods: "GET,POST,PUT,DELETE",
			AllowHeaders: "Content-Type,Authorization",
			MaxAge:       600,
		}))
	}
	api := s.app.Group("/api", mw...)
	api.Get("/views", s.viewTotals)
	api.Post("/views/*", s.countView)
	api.Get("/views/*", s.viewTotal)
	// Slugs may contain "/", so the slug is the wildcard; PUT and DELETE take the id
	// from its last segment.
	api.Get("/comments/*", s.listComments)
	api.Post("/comments/*", s.addComment)
	api.Put("/comments/*", s.editComment)
	api.Delete("/comments/*", s.deleteComment)
	api.Post("/inquiries", s.addInquiry)

	admin := api.Group("/admin", s.adminGuard()...)
	admin.Get("/stats", s.blogStats)
	admin.Get("/comments", s.adminComments)
	admin.Delete("/comments/:id", s.adminDeleteComment)
	admin.Get("/inquiries", s.adminInquiries)
	admin.Post("/inquiries/:id/read", s.adminMarkInquiryRead)
	admin.Get("/visitors", s.adminVisitors)
	admin.Get("/slugs", s.adminSlugs)
	admin.Delete("/slugs", s.adminDeleteSlugs)
	admin.Delete("/slugs/*", s.adminDeleteSlug)
}

// clientIP is the socket peer, or the trusted proxy header's address when configured
// and valid. For a list (X-Forwarded-For) the last entry is the one the trusted proxy
// appended; earlier ones are whatever the client sent. Likewise the header's last
// line: a proxy that adds a line of its own (HAProxy's forwardfor) leaves the
// client's first.
func (s *Server) clientIP(c *fiber.Ctx) string {
	if h := s.cfg.Blog.ClientIPHeader; h != "" {
		var v string
		if lines := c.Request().Header.PeekAll(h); len(lines) > 0 {
			last := lines[len(lines)-1]
			v = unsafe.String(unsafe.SliceData(last), len(last)) // parsed here, not kept
		}
		if i := strings.LastIndexByte(v, ','); i >= 0 {
			v = v[i+1:]
		}
		v = strings.TrimSpace(v)
		if a, err := netip.ParseAddr(v); err == nil {
			return a.WithZone("").Unmap().String()
		}
		// Some proxies (Azure's) send ip:port, [v6]:port: every client fell back to the
		// proxy's own address, and all shared one rate limit and budget.
		if ap, err := netip.ParseAddrPort(v); err == nil {
			return ap.Addr().WithZone("").Unmap().String()
		}
	}
	if a, ok := netip.AddrFromSlice(c.Context().RemoteIP()); ok {
		return a.Unmap().String()
	}
	return c.Context().RemoteIP().String()
}

// hit builds the store's view of a request. Geo headers are only trustworthy behind the
// CDN that sets them; they are cleaned and bounded since anyone can send them.
func (s *Server) hit(c *fiber.Ctx, slug string) store.Hit {
	return store.Hit{
		Slug:    slug,
		IP:      s.clientIP(c),
		Country: cleanHeaderText(c.Get(s.cfg.Blog.CountryHeader), 8),
		City:    cleanHeaderText(c.Get(s.cfg.Blog.CityHeader), 100),
		Lat:     headerCoord(c.Get(s.cfg.Blog.LatHeader), 90),
		Lon:     headerCoord(c.Get(s.cfg.Blog.LonHeader), 180),
	}
}

func cleanHeaderText(v string, maxRunes int) string {
	if !utf8.ValidString(v) {
		return ""
	}
	var b strings.Builder
	n := 0
	for _, r := range strings.TrimSpace(v) {
		if n == maxRunes {
			break
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			continue
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

func headerCoord(v string, limit float64) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.Abs(f) > limit {
		return 0
	}
	return f
}

// pathSlug is the slug in a request path, as the blog links it: percent-encoded
// (Fiber hands path parameters over raw), decoded once, then checked and brought to
// NFC by usertext.Slug, the one definition every route and the --seed-views import
// share. The result is a copy: Fiber reuses the request's memory.
func pathSlug(raw string) (string, error) {
	dec, err := url.PathUnescape(raw)
	if err != nil {
		return "", badRequest("invalid_slug", "the slug is not correctly percent-encoded")
	}
	return querySlug(dec)
}

// querySlug is pathSlug for a slug that is decoded already (a query parameter).
func querySlug(v string) (string, error) {
	slug, err := usertext.Slug(v)
	if err != nil {
		return "", badRequest("invalid_slug", err.Error())
	}
	return strings.Clone(slug), nil
}

// blogError maps a store error to what a client sees; anything unexpected is logged
// and answered 503 so that the blog retries rather than shows a wrong number.
func (s *Server) blogError(c *fiber.Ctx, err error) error {
	var budget *store.NewSlugLimitError
	switch {
	case errors.Is(err, store.ErrInvalidSlug):
		return badRequest("invalid_slug", err.Error())
	case errors.Is(err, store.ErrNotFound):
		return newError(fiber.StatusNotFound, "not_found", "no such comment")
	case errors.Is(err, store.ErrWrongPassword):
		return newError(fiber.StatusForbidden, "wrong_password", "the password does not match this comment")
	case errors.As(err, &budget):
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(math.Ceil(budget.RetryAfter.Seconds()))))
		return newError(fiber.StatusTooManyRequests, "new_slug_limit",
			"this address has created its share of new slugs for today ("+strconv.FormatUint(budget.Budget, 10)+"); its views of existing posts still count, and it may create new ones again after midnight UTC")
	case errors.Is(err, store.ErrSlugLimit):
		return newError(fiber.StatusInsufficientStorage, "slug_limit", "too many distinct slugs are stored; new slugs are refused until an operator deletes some (DELETE /api/admin/slugs)")
	case errors.Is(err, store.ErrPasswordBusy):
		c.Set(fiber.HeaderRetryAfter, "1")
		return newError(fiber.StatusServiceUnavailable, "busy", "too many comment passwords are being checked at once; nothing was changed, try again in a second")
	case errors.Is(err, store.ErrCommentLimit):
		return newError(fiber.StatusInsufficientStorage, "comment_limit", "the comment store is full; new comments are refused until some are deleted")
	}
	// A full disk or a failing log answers as on every route (507, 503), and the store
	// logs the change once: no line per request.
	if ae := domainError(err); ae != nil {
		return ae
	}
	s.cfg.Logger.Error("blog: store failed", "method", c.Method(), "route", c.Route().Path, "err", err)
	return errStoreFailure
}

// allowWrite spends one of the client's blog writes, answering 429 once they are used.
func (s *Server) allowWrite(c *fiber.Ctx, ip string) error {
	ok, retry, err := s.deps.Blog.AllowBlogWrite(ip)
	if err != nil {
		return s.blogError(c, err)
	}
	if !ok {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(math.Ceil(retry.Seconds()))))
		return newError(fiber.StatusTooManyRequests, "rate_limited",
			"too many comments or messages from this address; try again in a minute")
	}
	return nil
}

// decodeBlogJSON reads a JSON object body.
func decodeBlogJSON(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("empty_body", "the request body must be a JSON object")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errMalformedJSON
	}
	return nil
}

// lineField brings a one-line field (a name, an e-mail address) to NFC without
// surrounding space, and checks its length in characters; control, bidi and invisible
// characters are refused (usertext.Line says which and why).
func lineField(field, v string, minRunes, maxRunes int) (string, error) {
	v, err := usertext.Line(v)
	if err != nil {
		return "", textError(field, err)
	}
	return v, lengthCheck(field, v, minRunes, maxRunes)
}

// contentField brings multi-line text to NFC with bidi and invisible characters
// removed (usertext.Content), then checks its length: text that was nothing but
// such characters is empty, and refused as such.
func contentField(field, v string, minRunes, maxRunes int) (string, error) {
	v, err := usertext.Content(v)
	if err != nil {
		return "", textError(field, err)
	}
	return v, lengthCheck(field, v, minRunes, maxRunes)
}

func textError(field string, err error) error {
	if errors.Is(err, usertext.ErrNotUTF8) {
		return badRequest("invalid_"+field, field+" is not valid UTF-8")
	}
	return badRequest("invalid_"+field, field+" "+err.Error())
}

func lengthCheck(field, v string, minRunes, maxRunes int) error {
	if strings.TrimSpace(v) == "" && minRunes > 0 {
		return badRequest("invalid_"+field, field+" is required")
	}
	if minRunes > 0 && !visibleText(v) {
		return badRequest("invalid_"+field, field+" is required: it shows nothing (only spaces, joiners, marks or blank characters)")
	}
	if n := utf8.RuneCountInString(v); n < minRunes || n > maxRunes {
		return badRequest("invalid_"+field, field+" must be "+strconv.Itoa(minRunes)+" to "+strconv.Itoa(maxRunes)+" characters")
	}
	return nil
}

// visibleText reports whether v shows something: a letter, digit, punctuation mark,
// symbol or spacing mark. Space, joiners (U+200C/D), format characters, variation
// selectors and combining marks alone show nothing; nor does the Braille blank U+2800,
// a symbol by category and the usual blank nickname once the Hangul fillers are
// refused.
func visibleText(v string) bool {
	for _, r := range v {
		if r == '\u2800' {
			continue
		}
		if unicode.In(r, unicode.L, unicode.N, unicode.P, unicode.S, unicode.Mc) {
			return true
		}
	}
	return false
}

// queryLimit reads ?limit= (default def, 1..max) and ?before= (an id, 0 when absent).
func queryPage(c *fiber.Ctx, def, max int) (limit int, before uint64, err error) {
	limit = def
	if v := c.Query("limit"); v != "" {
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 1 || n > max {
			return 0, 0, badRequest("bad_limit", "limit must be a whole number from 1 to "+strconv.Itoa(max))
		}
		limit = n
	}
	if v := c.Query("before"); v != "" {
		n, perr := strconv.ParseUint(v, 10, 64)
		if perr != nil || n == 0 {
			return 0, 0, badRequest("bad_before", "before must be a positive id")
		}
		before = n
	}
	return limit, before, nil
}
