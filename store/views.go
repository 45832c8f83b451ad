package store

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/hangarhq/hangar/internal/usertext"
)

// Blog view counting (seed 004). Every hit is one commit that touches a handful of
// small keys by name: no scans on the hot path.
const (
	// ViewDedupWindow is how long a repeat view of a slug from the same IP is not counted.
	ViewDedupWindow = 30 * time.Minute
	// MaxSlugLen bounds a slug in bytes, after NFC normalisation.
	MaxSlugLen = usertext.MaxSlugBytes
	// MaxSlugs bounds the number of distinct slugs with a total, so that anyone posting
	// made-up slugs cannot grow the keyspace without limit.
	MaxSlugs = 100_000
	// NewSlugsPerClient is how many slugs one client (an IPv4 address or an IPv6 /64)
	// may bring into existence per UTC day by being their first counted reader. A
	// reader is the first one of a new post only now and then; without it one address
	// filled MaxSlugs in 30 s and every later post was refused for good.
	NewSlugsPerClient = 20
	// NewSlugsPerClientInReserve replaces NewSlugsPerClient once fewer than a
	// twentieth of MaxSlugs are left, so that what remains goes to many readers, one
	// new slug each a day, rather than to the first few addresses that find it.
	NewSlugsPerClientInReserve = 1
	// DailyRetention is how long per-day totals (views, unique visitors) are kept.
	DailyRetention = 400 * 24 * time.Hour
	// saltTTL keeps yesterday's salt while today's dedup windows may still refer to it,
	// then lets it go so that old hashes can no longer be linked to an IP.
	saltTTL = 48 * time.Hour
	// slugBudgetTTL outlives the UTC day its daily-salted hash belongs to.
	slugBudgetTTL = 25 * time.Hour

	metaViewsSeeded = prefixMeta + "views_seeded"
	metaSlugCount   = prefixMeta + "slug_count"
	dayLayout       = "2006-01-02"
)

// The reader record keeps a slug's length in one byte.
var _ [255 - MaxSlugLen]struct{}

// maxSlugs is MaxSlugs; a variable so that this package's tests can reach the cap
// without writing a hundred thousand slugs.
var maxSlugs uint64 = MaxSlugs

var (
	// ErrInvalidSlug is returned for a slug that fails ValidateSlug.
	ErrInvalidSlug = usertext.ErrInvalidSlug
	// ErrSlugLimit is returned when a view would create slug number MaxSlugs+1.
	ErrSlugLimit = errors.New("store: too many distinct slugs")
	// ErrNewSlugLimit is returned (inside a *NewSlugLimitError) when a client has
	// brought its day's share of new slugs into existence.
	ErrNewSlugLimit = errors.New("store: this client created its share of new slugs today")
)

// NewSlugLimitError says when the client's budget of new slugs renews.
type NewSlugLimitError struct {
	RetryAfter time.Duration // until the next UTC midnight, when the salt changes
	Budget     uint64        // the budget that was used up
}

func (e *NewSlugLimitError) Error() string { return ErrNewSlugLimit.Error() }
func (e *NewSlugLimitError) Unwrap() error { return ErrNewSlugLimit }

// ValidateSlug accepts a slug that usertext.Slug accepts and leaves unchanged: any
// non-empty NFC UTF-8 up to MaxSlugLen bytes without control or invisible characters,
// backslashes or empty, "." or ".." path segments. The store wants the canonical form
// because a slug is a key: two spellings of one word would be two totals. Callers
// normalise outside input with usertext.Slug first.
func ValidateSlug(slug string) error {
	canon, err := usertext.Slug(slug)
	if err != nil {
		return err
	}
	if canon != slug {
		return fmt.Errorf("%w: the slug is not in Unicode NFC form", ErrInvalidSlug)
	}
	return nil
}

// Hit is one page view as the HTTP layer saw it.
type Hit struct {
	Slug    string
	IP      string
	Country string
	City    string
	Lat     float64
	Lon     float64
}

// ViewResult is the slug's total after a hit, and whether the hit was counted.
type ViewResult struct {
	Total   uint64
	Counted bool
}

// RecordView counts a view of h.Slug unless the same client (IPv4 address or IPv6
// /64) was counted for that slug in the last ViewDedupWindow, logs the hit in the
// visitor log, and counts the client once per day as a unique visitor. The IP itself is only kept in the capped visitor log: the
// dedup state is keyed by a hash of the IP salted with a random salt that changes every
// day (Plausible's scheme). One reader record per hash serves both the dedup window and
// the unique-visitor set, so that a view reads and writes as few keys as possible.
func (s *Store) RecordView(h Hit) (ViewResult, error) {
	if err := ValidateSlug(h.Slug); err != nil {
		return ViewResult{}, err
	}
	now := s.now().UTC()
	seq, err := s.nextSeq("visitor")
	if err != nil {
		return ViewResult{}, err
	}
	logged, err := encodeVisitorSlot(seq, Visitor{
		TS: now.Truncate(time.Second), IP: h.IP, Slug: h.Slug,
		Country: h.Country, City: h.City, Lat: h.Lat, Lon: h.Lon,
	})
	if err != nil {
		return ViewResult{}, err
	}
	day := now.Format(dayLayout)
	salt, err := s.todaysSalt(day)
	if err != nil {
		return ViewResult{}, err
	}
	// One hash keys both the reader (dedup, unique visitors) and the new-slug budget:
	// a client is its IPv4 address or its IPv6 /64, or a fresh address per view
	// would count it again.
	hash := ipHash(salt, clientNet(h.IP))
	key := readerKey(hash)
	var res ViewResult
	err = s.updateNow(func(txn *tx) error {
		rd, known, err := s.getReader(txn, readerDay(now), hash)
		if err != nil {
			return err
		}
		rd, stepped := rd.notAfter(now)
		since := now.Add(-ViewDedupWindow)
		// A reader that holds maxReaderSlugs views inside the window is counted for
		// no more slugs until its oldest leaves it: were the oldest dropped to make
		// room, a client cycling through one slug more than the record holds was
		// counted on every view.
		seen := rd.countedSince(h.Slug, since) || rd.fullSince(since)
		if !seen {
			if seen, err = s.countedYesterday(txn, h.IP, h.Slug, now); err != nil {
				return err
			}
		}
		total, slugKnown, err := getU64(txn, viewsKey(h.Slug))
		if err != nil {
			return err
		}
		if !seen {
			if !slugKnown {
				budget := slugBudgetKey(hash)
				if err := claimSlug(txn, budget, now); err != nil {
					return err
				}
			}
			total++
			if err := putU64(txn, viewsKey(h.Slug), total, 0); err != nil {
				return err
			}
			if _, err := addU64(txn, viewsDayKey(day), 1, DailyRetention); err != nil {
				return err
			}
			rd = rd.with(h.Slug, now)
			res.Counted = true
		}
		res.Total = total
		if !known {
			// The hash is the day's, so a reader unknown to the store is a new
			// visitor of the day.
			if _, err := addU64(txn, uniqueCountKey(day), 1, DailyRetention); err != nil {
				return err
			}
		}
		if !seen || !known || stepped {
			s.readers.Add(readerDay(now), readerFilterHash(hash))
			if err := txn.SetEntry(badger.NewEntry(key, rd.encode()).WithTTL(readerTTL)); err != nil {
				return err
			}
		}
		return setListed(txn, visitorSlotKey(seq), logged)
	})
	return res, err
}

// countedYesterday covers the first ViewDedupWindow after midnight, when the window
// reaches into yesterday, whose views were recorded under yesterday's salt.
func (s *Store) countedYesterday(txn *tx, ip, slug string, now time.Time) (bool, error) {
	midnight := now.Truncate(24 * time.Hour) // UTC days
	if now.Sub(midnight) >= ViewDedupWindow {
		return false, nil
	}
	yesterday := midnight.Add(-time.Hour).Format(dayLayout)
	salt, err := daySalt(txn, yesterday, false)
	if err != nil || salt == nil {
		return false, err
	}
	rd, _, err := s.getReader(txn, readerDay(now)-1, ipHash(salt, clientNet(ip)))
	return rd.countedSince(slug, now.Add(-ViewDedupWindow)), err
}

// reader is what the store remembers about one salted IP hash for a day: the slugs it
// was counted for recently, newest last, each with the time it was counted.
type reader []readerEntry

type readerEntry struct {
	at   int64 // unix ns
	slug string
}

const (
	// readerTTL outlives the day the hash belongs to (the unique-visitor set) and the
	// dedup window past its midnight. Badger expires on the wall clock; the stored
	// times are what decide.
	readerTTL = 25 * time.Hour
	// maxReaderSlugs bounds one reader's record: a client counted for this many slugs
	// within the window is counted for no more until the oldest leaves it, so nothing
	// grows and no slug is counted twice inside the window.
	maxReaderSlugs = 64
)

func (r reader) countedSince(slug string, since time.Time) bool {
	for _, e := range r {
		if e.slug == slug && e.at > since.UnixNano() {
			return true
		}
	}
	return false
}

// notAfter moves views counted after now (before the clock stepped back) to now, so
// that they leave the window ViewDedupWindow from now rather than the step's length
// later; stepped reports that it moved any.
func (r reader) notAfter(now time.Time) (out reader, stepped bool) {
	for i, e := range r {
		if e.at > now.UnixNano() {
			if !stepped {
				out, stepped = slices.Clone(r), true
			}
			out[i].at = now.UnixNano()
		}
	}
	if !stepped {
		return r, false
	}
	return out, true
}

// fullSince reports whether r holds maxReaderSlugs slugs counted after since.
func (r reader) fullSince(since time.Time) bool {
	n := 0
	for _, e := range r {
		if e.at > since.UnixNano() {
			n++
		}
	}
	return n >= maxReaderSlugs
}

// with records slug as counted at now, dropping entries that left the window.
func (r reader) with(slug string, now time.Time) reader {
	since := now.Add(-ViewDedupWindow).UnixNano()
	out := make(reader, 0, len(r)+1)
	for _, e := range r {
		if e.at > since && e.slug != slug {
			out = append(out, e)
		}
	}
	out = append(out, readerEntry{at: now.UnixNano(), slug: slug})
	if len(out) > maxReaderSlugs {
		out = out[len(out)-maxReaderSlugs:]
	}
	return out
}

// encode packs entries as [8-byte time][1-byte length][slug]: the record is read and
// written on every view, so it is kept small and cheap to parse.
func (r reader) encode() []byte {
	n := 0
	for _, e := range r {
		n += 9 + len(e.slug)
	}
	b := make([]byte, 0, n)
	for _, e := range r {
		b = binary.BigEndian.AppendUint64(b, uint64(e.at))
		b = append(b, byte(len(e.slug)))
		b = append(b, e.slug...)
	}
	return b
}

func decodeReader(b []byte) (reader, error) {
	var r reader
	for len(b) > 0 {
		if len(b) < 9 || len(b) < 9+int(b[8]) {
			return nil, fmt.Errorf("store: truncated reader record")
		}
		l := int(b[8])
		r = append(r, readerEntry{at: int64(binary.BigEndian.Uint64(b)), slug: string(b[9 : 9+l])})
		b = b[9+l:]
	}
	return r, nil
}

// getReader reads the reader record of hash, salted with day's salt.
func (s *Store) getReader(txn *tx, day int64, hash []byte) (r reader, known bool, err error) {
	if !s.readers.MayContain(day, readerFilterHash(hash)) {
		return nil, false, nil
	}
	item, err := txn.Get(readerKey(hash))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	err = item.Value(func(v []byte) error {
		r, err = decodeReader(v)
		return err
	})
	return r, true, err
}

// claimSlug takes a place under maxSlugs for a new slug and, when budget names a
// client's budget record, one of that client's new slugs of the day. The budget is
// checked first and only spent with the place, so a refused view spends nothing.
func claimSlug(txn *tx, budget []byte, now time.Time) error {
	n, _, err := getU64(txn, []byte(metaSlugCount))
	if err != nil {
		return err
	}
	if n >= maxSlugs {
		return ErrSlugLimit
	}
	if budget != nil {
		allowed := uint64(NewSlugsPerClient)
		if n >= maxSlugs-maxSlugs/20 {
			allowed = NewSlugsPerClientInReserve
		}
		used, _, err := getU64(txn, budget)
		if err != nil {
			return err
		}
		if used >= allowed {
			midnight := now.Truncate(24 * time.Hour).Add(24 * time.Hour)
			return &NewSlugLimitError{RetryAfter: midnight.Sub(now), Budget: allowed}
		}
		if err := putU64(txn, budget, used+1, slugBudgetTTL); err != nil {
			return err
		}
	}
	return putU64(txn, []byte(metaSlugCount), n+1, 0)
}

// clientNet is what one client is keyed by (its views' dedup, unique visitors, its
// new-slug budget, its blog writes): the IPv4 address, or the IPv6 /64, since one
// subscriber is routinely handed a whole /64 and could otherwise take a fresh address
// for every view or slug.
func clientNet(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is6() || a.Is4In6() {
		return ip
	}
	p, err := a.Prefix(64)
	if err != nil {
		return ip
	}
	return p.String()
}

func slugBudgetKey(hash []byte) []byte { return append([]byte(prefixSlugBudget), hash...) }

// saltCaches holds each open store's salt of the day, so that the per-view transaction
// does not read it. Keyed weakly: a closed, unreachable store's entry goes with it.
var saltCaches sync.Map // weak.Pointer[Store] → *saltCache

type saltCache struct {
	mu   sync.Mutex
	day  string
	salt []byte
}

// todaysSalt returns day's salt, creating and recording it on the day's first use. Two
// callers racing at midnight end up with the same salt: commits run one at a time, and
// the second finds the first's.
func (s *Store) todaysSalt(day string) ([]byte, error) {
	key := weak.Make(s)
	v, ok := saltCaches.Load(key)
	if !ok {
		var loaded bool
		v, loaded = saltCaches.LoadOrStore(key, &saltCache{})
		if !loaded {
			runtime.AddCleanup(s, func(k weak.Pointer[Store]) { saltCaches.Delete(k) }, key)
		}
	}
	c := v.(*saltCache)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.day == day {
		return c.salt, nil
	}
	var salt []byte
	err := s.update(func(txn *tx) error {
		var err error
		salt, err = daySalt(txn, day, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	c.day, c.salt = day, salt
	return salt, nil
}

// daySalt returns the day's IP salt, creating it when create is set.
func daySalt(txn *tx, day string, create bool) ([]byte, error) {
	key := []byte(prefixIPSalt + day)
	item, err := txn.Get(key)
	if err == nil {
		return item.ValueCopy(nil)
	}
	if !errors.Is(err, badger.ErrKeyNotFound) {
		return nil, err
	}
	if !create {
		return nil, nil
	}
	salt := make([]byte, 16)
	rand.Read(salt)
	return salt, txn.SetEntry(badger.NewEntry(key, salt).WithTTL(saltTTL))
}

func ipHash(salt []byte, ip string) []byte {
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte(ip))
	return h.Sum(nil)[:16]
}

// ViewTotals returns the total of each slug; unknown slugs are 0.
func (s *Store) ViewTotals(slugs []string) (map[string]uint64, error) {
	for _, slug := range slugs {
		if err := ValidateSlug(slug); err != nil {
			return nil, err
		}
	}
	out := make(map[string]uint64, len(slugs))
	err := s.view(func(txn *tx) error {
		for _, slug := range slugs {
			n, _, err := getU64(txn, viewsKey(slug))
			if err != nil {
				return err
			}
			out[slug] = n
		}
		return nil
	})
	return out, err
}

// SeedViews adds counts to the view totals once in the life of the store: the first
// call records that in meta and reports applied; every later call does nothing. All
// slugs are validated before anything is written, and the whole seed is one
// transaction, so a crash cannot leave it half applied or applied twice.
func (s *Store) SeedViews(counts map[string]uint64) (applied bool, err error) {
	for slug := range counts {
		if err := ValidateSlug(slug); err != nil {
			return false, fmt.Errorf("seed slug %q: %w", slug, err)
		}
	}
	err = s.update(func(txn *tx) error {
		applied = false
		done, err := exists(txn, []byte(metaViewsSeeded))
		if err != nil || done {
			return err
		}
		for slug, n := range counts {
			_, known, err := getU64(txn, viewsKey(slug))
			if err != nil {
				return err
			}
			if !known {
				if err := claimSlug(txn, nil, time.Time{}); err != nil {
					return err
				}
			}
			if _, err := addU64(txn, viewsKey(slug), n, 0); err != nil {
				return err
			}
		}
		applied = true
		return txn.Set([]byte(metaViewsSeeded), []byte(s.now().UTC().Format(time.RFC3339)))
	})
	return applied, err
}

// SlugCount is how many distinct slugs hold a total, out of MaxSlugs.
func (s *Store) SlugCount() (uint64, error) {
	var n uint64
	err := s.view(func(txn *tx) error {
		var err error
		n, _, err = getU64(txn, []byte(metaSlugCount))
		return err
	})
	return n, err
}

// Slugs lists up to limit slugs that start with prefix and sort after after (""
// from the first), in byte order, with their totals: the operator's way to find junk
// slugs. Paging by the last slug seen keeps each page one seek and limit reads.
func (s *Store) Slugs(prefix, after string, limit int) ([]SlugViews, error) {
	out := []SlugViews{}
	if limit <= 0 {
		return out, nil
	}
	full := []byte(prefixViews + prefix)
	err := s.view(func(txn *tx) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = full
		it := txn.NewIterator(opts)
		defer it.Close()
		seek := full
		if past := append([]byte(prefixViews+after), 0); after != "" && bytes.Compare(past, seek) > 0 {
			// The first key past after: after itself followed by the least byte.
			seek = past
		}
		for it.Seek(seek); it.ValidForPrefix(full) && len(out) < limit; it.Next() {
			item := it.Item()
			slug := string(item.KeyCopy(nil)[len(prefixViews):])
			if slug <= after {
				continue
			}
			err := item.Value(func(v []byte) error {
				if len(v) == 8 {
					out = append(out, SlugViews{Slug: slug, Views: binary.BigEndian.Uint64(v)})
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// DeleteSlug removes slug's total and frees its place under MaxSlugs, returning the
// total it had; ErrNotFound when the slug holds none. Views per day are the whole
// blog's, not the slug's, so they stay as they were; so do the slug's comments, which
// an operator deletes one by one, and the capped visitor log, which forgets on its own.
func (s *Store) DeleteSlug(slug string) (uint64, error) {
	if err := ValidateSlug(slug); err != nil {
		return 0, err
	}
	var total uint64
	err := s.update(func(txn *tx) error {
		var known bool
		var err error
		total, known, err = getU64(txn, viewsKey(slug))
		if err != nil {
			return err
		}
		if !known {
			return ErrNotFound
		}
		if err := txn.Delete(viewsKey(slug)); err != nil {
			return err
		}
		n, _, err := getU64(txn, []byte(metaSlugCount))
		if err != nil || n == 0 {
			return err
		}
		return putU64(txn, []byte(metaSlugCount), n-1, 0)
	})
	return total, err
}

// MaxSlugDeletes bounds the slugs one DeleteSlugs call removes, so that one commit
// stays small; the caller repeats while it reports more.
const MaxSlugDeletes = 1000

// DeleteSlugs removes up to MaxSlugDeletes slugs that start with prefix and hold at
// most maxViews views, freeing their places: how an operator clears a flood of
// made-up slugs, which hold a view or so each, without touching real posts. It
// reports how many went and whether more match. The candidates are found in a read,
// so the scan does not hold up other commits, and each is deleted only if its total
// is still at most maxViews when the commit runs.
func (s *Store) DeleteSlugs(prefix string, maxViews uint64) (deleted int, more bool, err error) {
	var keys [][]byte
	err = s.view(func(txn *tx) error {
		return scanPrefix(txn, prefixViews+prefix, false, func(key, val []byte) (bool, error) {
			if len(val) == 8 && binary.BigEndian.Uint64(val) <= maxViews {
				if len(keys) == MaxSlugDeletes {
					more = true
					return false, nil
				}
				keys = append(keys, key)
			}
			return true, nil
		})
	})
	if err != nil || len(keys) == 0 {
		return 0, more, err
	}
	err = s.update(func(txn *tx) error {
		deleted = 0
		for _, k := range keys {
			n, known, err := getU64(txn, k)
			if err != nil {
				return err
			}
			if !known || n > maxViews {
				continue
			}
			if err := txn.Delete(k); err != nil {
				return err
			}
			deleted++
		}
		count, _, err := getU64(txn, []byte(metaSlugCount))
		if err != nil {
			return err
		}
		return putU64(txn, []byte(metaSlugCount), count-min(count, uint64(deleted)), 0)
	})
	return deleted, more, err
}

// SlugViews is one slug's total.
type SlugViews struct {
	Slug  string `json:"slug"`
	Views uint64 `json:"views"`
}

// DayStats is one day of the daily series.
type DayStats struct {
	Day            string `json:"day"`
	Views          uint64 `json:"views"`
	UniqueVisitors uint64 `json:"unique_visitors"`
}

// BlogStats is the admin summary; the HTTP API answers with its api.BlogStats copy.
type BlogStats struct {
	TotalViews          uint64      `json:"total_views"`
	TodayViews          uint64      `json:"today_views"`
	TodayUniqueVisitors uint64      `json:"today_unique_visitors"`
	TopSlugs            []SlugViews `json:"top_slugs"`
	Daily               []DayStats  `json:"daily"`
	RecentVisitors      []Visitor   `json:"recent_visitors"`
}

// BlogStats sums the slug totals (bounded by MaxSlugs), reads the last days of daily
// totals oldest first, and the newest recent visitors.
func (s *Store) BlogStats(top, days, recent int) (BlogStats, error) {
	now := s.now().UTC()
	st := BlogStats{TopSlugs: []SlugViews{}, Daily: []DayStats{}}
	err := s.view(func(txn *tx) error {
		var all []SlugViews
		err := scanPrefix(txn, prefixViews, false, func(key, val []byte) (bool, error) {
			if len(val) == 8 {
				n := binary.BigEndian.Uint64(val)
				st.TotalViews += n
				all = append(all, SlugViews{Slug: string(key[len(prefixViews):]), Views: n})
			}
			return true, nil
		})
		if err != nil {
			return err
		}
		slices.SortFunc(all, func(a, b SlugViews) int {
			if c := cmp.Compare(b.Views, a.Views); c != 0 {
				return c
			}
			return strings.Compare(a.Slug, b.Slug)
		})
		st.TopSlugs = append(st.TopSlugs, all[:min(top, len(all))]...)
		for i := days - 1; i >= 0; i-- {
			day := now.AddDate(0, 0, -i).Format(dayLayout)
			views, _, err := getU64(txn, viewsDayKey(day))
			if err != nil {
				return err
			}
			uniq, _, err := getU64(txn, uniqueCountKey(day))
			if err != nil {
				return err
			}
			st.Daily = append(st.Daily, DayStats{Day: day, Views: views, UniqueVisitors: uniq})
		}
		if n := len(st.Daily); n > 0 {
			st.TodayViews, st.TodayUniqueVisitors = st.Daily[n-1].Views, st.Daily[n-1].UniqueVisitors
		}
		st.RecentVisitors, err = recentVisitors(txn, recent)
		return err
	})
	return st, err
}

func viewsKey(slug string) []byte   { return []byte(prefixViews + slug) }
func viewsDayKey(day string) []byte { return []byte(prefixViewsDay + day) }
func uniqueCountKey(day string) []byte {
	return []byte(prefixUniqueCount + day)
}

func readerKey(hash []byte) []byte {
	return append([]byte(prefixReader), hash...)
}

// getU64 reads an 8-byte big-endian counter; a missing key is 0 and not known.
func getU64(txn *tx, key []byte) (n uint64, known bool, err error) {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	err = item.Value(func(v []byte) error {
		if len(v) != 8 {
			return fmt.Errorf("store: counter %q is %d bytes, not 8", key, len(v))
		}
		n = binary.BigEndian.Uint64(v)
		return nil
	})
	return n, true, err
}

func putU64(txn *tx, key []byte, n uint64, ttl time.Duration) error {
	v := make([]byte, 8)
	binary.BigEndian.PutUint64(v, n)
	return txn.PutOwned(key, v, expiry(ttl), false)
}

func addU64(txn *tx, key []byte, delta uint64, ttl time.Duration) (uint64, error) {
	n, _, err := getU64(txn, key)
	if err != nil {
		return 0, err
	}
	n += delta
	return n, putU64(txn, key, n, ttl)
}
