package http

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/internal/usertext"
	"github.com/hangarhq/hangar/store"
)

// blogStats answers GET /api/admin/stats.
func (s *Server) blogStats(c *fiber.Ctx) error {
	st, err := s.deps.Blog.BlogStats(statsTopSlugs, statsDays, statsRecent)
	if err != nil {
		return s.blogError(c, err)
	}
	return c.JSON(viewBlogStats(st))
}

// viewBlogStats is the store's summary as the admin API shows it (api.BlogStats).
// Counters are uint64 in the store and int64 on the wire: the same digits below 2^63.
func viewBlogStats(st store.BlogStats) api.BlogStats {
	v := api.BlogStats{
		TotalViews: int64(st.TotalViews), TodayViews: int64(st.TodayViews), TodayUniqueVisitors: int64(st.TodayUniqueVisitors),
		TopSlugs:       make([]api.SlugViews, 0, len(st.TopSlugs)),
		Daily:          make([]api.DailyViews, 0, len(st.Daily)),
		RecentVisitors: make([]api.Visitor, 0, len(st.RecentVisitors)),
	}
	for _, t := range st.TopSlugs {
		v.TopSlugs = append(v.TopSlugs, api.SlugViews{Slug: t.Slug, Views: int64(t.Views)})
	}
	for _, d := range st.Daily {
		v.Daily = append(v.Daily, api.DailyViews{Day: d.Day, Views: int64(d.Views), UniqueVisitors: int64(d.UniqueVisitors)})
	}
	for _, r := range st.RecentVisitors {
		v.RecentVisitors = append(v.RecentVisitors, api.Visitor{TS: r.TS, IP: r.IP, Slug: r.Slug, Country: r.Country, City: r.City, Lat: r.Lat, Lon: r.Lon})
	}
	return v
}

type adminCommentsResponse struct {
	Comments []store.Comment `json:"comments"`
}

// adminComments lists every slug's comments with their IPs, newest first
// (GET /api/admin/comments?limit=&before=).
func (s *Server) adminComments(c *fiber.Ctx) error {
	limit, before, err := queryPage(c, 100, 1000)
	if err != nil {
		return err
	}
	list, err := s.deps.Blog.AdminComments(limit, before)
	if err != nil {
		return s.blogError(c, err)
	}
	return c.JSON(adminCommentsResponse{Comments: list})
}

// adminDeleteComment deletes any comment (DELETE /api/admin/comments/:id).
func (s *Server) adminDeleteComment(c *fiber.Ctx) error {
	id, err := strconv.ParseUint(c.Params("id"), 10, 64)
	if err != nil || id == 0 {
		return badRequest("bad_id", "the comment id must be a positive integer")
	}
	if err := s.deps.Blog.AdminDeleteComment(id); err != nil {
		return s.blogError(c, err)
	}
	return c.JSON(fiber.Map{"id": id, "deleted": true})
}

type adminInquiriesResponse struct {
	Inquiries []store.Inquiry `json:"inquiries"`
}

// adminInquiries lists contact-form messages, newest first
// (GET /api/admin/inquiries?limit=&before=).
func (s *Server) adminInquiries(c *fiber.Ctx) error {
	limit, before, err := queryPage(c, 100, 1000)
	if err != nil {
		return err
	}
	list, err := s.deps.Blog.Inquiries(limit, before)
	if err != nil {
		return s.blogError(c, err)
	}
	return c.JSON(adminInquiriesResponse{Inquiries: list})
}

// Paging of GET /api/admin/slugs.
const (
	slugsPageDefault = 100
	slugsPageMax     = 1000
)

type adminSlugsResponse struct {
	Slugs []store.SlugViews `json:"slugs"`
	// Count is how many slugs hold a total, of MaxSlugs.
	Count    uint64 `json:"count"`
	MaxSlugs uint64 `json:"max_slugs"`
	// Next is the after= of the following page; empty on the last one.
	Next string `json:"next,omitempty"`
}

// adminSlugs lists slugs with their totals in byte order
// (GET /api/admin/slugs?prefix=&after=&limit=), so that an operator can find a flood
// of made-up ones and delete them.
func (s *Server) adminSlugs(c *fiber.Ctx) error {
	limit := slugsPageDefault
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > slugsPageMax {
			return badRequest("bad_limit", "limit must be a whole number from 1 to "+strconv.Itoa(slugsPageMax))
		}
		limit = n
	}
	prefix, err := slugQueryText(c, "prefix")
	if err != nil {
		return err
	}
	after, err := slugQueryText(c, "after")
	if err != nil {
		return err
	}
	list, err := s.deps.Blog.Slugs(prefix, after, limit)
	if err != nil {
		return s.blogError(c, err)
	}
	count, err := s.deps.Blog.SlugCount()
	if err != nil {
		return s.blogError(c, err)
	}
	out := adminSlugsResponse{Slugs: list, Count: count, MaxSlugs: store.MaxSlugs}
	if len(list) == limit {
		out.Next = list[len(list)-1].Slug
	}
	return c.JSON(out)
}

// adminDeleteSlug deletes a slug's total and frees its place under the cap
// (DELETE /api/admin/slugs/:slug); 404 when the slug holds no total.
func (s *Server) adminDeleteSlug(c *fiber.Ctx) error {
	slug, err := pathSlug(c.Params("*"))
	if err != nil {
		return err
	}
	views, err := s.deps.Blog.DeleteSlug(slug)
	if errors.Is(err, store.ErrNotFound) {
		return newError(fiber.StatusNotFound, "not_found", "no such slug: it holds no view total")
	}
	if err != nil {
		return s.blogError(c, err)
	}
	return c.JSON(fiber.Map{"slug": slug, "views": views, "deleted": true})
}

// slugQueryText reads a query parameter that is the start of a slug (a prefix, a
// cursor): any text a slug may start with, so only its length and characters are
// checked; it is brought to NFC to match the stored slugs.
func slugQueryText(c *fiber.Ctx, name string) (string, error) {
	raw := c.Query(name)
	v, err := usertext.Line(raw)
	if err != nil || len(v) > store.MaxSlugLen {
		return "", badRequest("bad_"+name, name+" must be at most "+strconv.Itoa(store.MaxSlugLen)+" bytes of text without control characters")
	}
	if strings.TrimSpace(raw) != raw {
		// Slugs may hold spaces inside: trimmed, "spam " would match "spamalot" too,
		// and " " every slug.
		return "", badRequest("bad_"+name, name+" must not start or end with a space")
	}
	return v, nil
}

// adminDeleteSlugs clears a flood of made-up slugs
// (DELETE /api/admin/slugs?prefix=&max_views=): up to store.MaxSlugDeletes slugs under
// prefix holding at most max_views views each. max_views is required, so that no
// request deletes every slug by leaving it out; "more" says to call again.
func (s *Server) adminDeleteSlugs(c *fiber.Ctx) error {
	prefix, err := slugQueryText(c, "prefix")
	if err != nil {
		return err
	}
	maxViews, err := strconv.ParseUint(c.Query("max_views"), 10, 64)
	if err != nil {
		return badRequest("bad_max_views", "max_views is required: delete only slugs with at most this many views (a whole number)")
	}
	deleted, more, err := s.deps.Blog.DeleteSlugs(prefix, maxViews)
	if err != nil {
		return s.blogError(c, err)
	}
	return c.JSON(fiber.Map{"deleted": deleted, "more": more})
}
