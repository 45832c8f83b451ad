package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	hangarhttp "github.com/hangarhq/hangar/http"
	"github.com/hangarhq/hangar/internal/usertext"
	"github.com/hangarhq/hangar/store"
)

// blogConfig is the blog API's part of `hangar serve`'s configuration (seed 004).
type blogConfig struct {
	SeedViews      string
	ClientIPHeader string
	CORSOrigins    string
	CountryHeader  string
	CityHeader     string
	LatHeader      string
	LonHeader      string
}

func addBlogFlags(f *envFlags, c *blogConfig) {
	f.String(&c.SeedViews, "seed-views", "HANGAR_SEED_VIEWS", "", `JSON file of {"slug": count} added to the view totals on the first start only; slugs as in URLs (Hangul, capitals), NFC-normalised; an invalid slug refuses the start, naming it`)
	f.String(&c.ClientIPHeader, "client-ip-header", "HANGAR_CLIENT_IP_HEADER", "", "header a trusted proxy sets to the client IP (e.g. CF-Connecting-IP); empty uses the socket address")
	f.String(&c.CORSOrigins, "cors-origins", "HANGAR_CORS_ORIGINS", "", "comma-separated blog origins allowed to call /api/* from a browser (e.g. https://blog.example)")
	f.String(&c.CountryHeader, "geo-country-header", "HANGAR_GEO_COUNTRY_HEADER", "CF-IPCountry", "request header carrying the visitor's country")
	f.String(&c.CityHeader, "geo-city-header", "HANGAR_GEO_CITY_HEADER", "CF-IPCity", "request header carrying the visitor's city")
	f.String(&c.LatHeader, "geo-lat-header", "HANGAR_GEO_LAT_HEADER", "CF-IPLatitude", "request header carrying the visitor's latitude")
	f.String(&c.LonHeader, "geo-lon-header", "HANGAR_GEO_LON_HEADER", "CF-IPLongitude", "request header carrying the visitor's longitude")
}

func (c blogConfig) validate() error {
	var errs []error
	for _, o := range c.origins() {
		if o != "*" && !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
			errs = append(errs, fmt.Errorf("--cors-origins: %q is not an origin such as https://blog.example", o))
		}
	}
	return errors.Join(errs...)
}

func (c blogConfig) origins() []string {
	var out []string
	for _, o := range strings.Split(c.CORSOrigins, ",") {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o != "" {
			out = append(out, o)
		}
	}
	return out
}

func (c blogConfig) http() hangarhttp.BlogConfig {
	return hangarhttp.BlogConfig{
		ClientIPHeader: c.ClientIPHeader,
		CountryHeader:  c.CountryHeader, CityHeader: c.CityHeader,
		LatHeader: c.LatHeader, LonHeader: c.LonHeader,
		CORSOrigins: c.origins(),
	}
}

// viewSeeder is the store's one-time seeding of view totals.
type viewSeeder interface {
	SeedViews(counts map[string]uint64) (applied bool, err error)
	MetaFlag(name string) (bool, error)
}

// seedViews applies the --seed-views file on the first start. Once the store records
// the seed, the file is not even read again, so a later missing or edited file is no
// error.
func seedViews(st viewSeeder, path string, log *slog.Logger) error {
	if path == "" {
		return nil
	}
	done, err := st.MetaFlag("views_seeded")
	if err != nil {
		return err
	}
	if done {
		log.Info("view totals were seeded on an earlier start; --seed-views ignored", "file", path)
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--seed-views: %w", err)
	}
	counts, err := parseSeedViews(b)
	if err != nil {
		return fmt.Errorf("--seed-views %s: %w", path, err)
	}
	applied, err := st.SeedViews(counts)
	if err != nil {
		return fmt.Errorf("--seed-views %s: %w", path, err)
	}
	if applied {
		log.Info("view totals seeded", "file", path, "slugs", len(counts))
	}
	return nil
}

// maxNamedSlugs bounds how many invalid slugs one error names.
const maxNamedSlugs = 10

// parseSeedViews decodes a --seed-views file, a JSON object of slug to count, and
// brings each slug to the form a request's takes (usertext.Slug: NFC, checked), so
// that {"한글-글": 17} is read back by GET /api/views/한글-글. Two spellings of one
// slug (composed and decomposed Hangul) are added together.
//
// An invalid slug refuses the whole file, naming each bad slug (up to ten) and why:
// the seed is applied once in the store's life, so a slug skipped now would lose its
// total for good, while a refused start costs the operator one edit.
func parseSeedViews(b []byte) (map[string]uint64, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("the file is not UTF-8")
	}
	var raw map[string]uint64
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("want a JSON object of slug to a whole number of views: %w", err)
	}
	if raw == nil {
		return nil, errors.New("want a JSON object of slug to a whole number of views, not null")
	}
	counts := make(map[string]uint64, len(raw))
	var bad []string
	for name, n := range raw {
		slug, err := usertext.Slug(name)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%q (%s)", name, strings.TrimPrefix(err.Error(), usertext.ErrInvalidSlug.Error()+": ")))
			continue
		}
		if counts[slug] > math.MaxUint64-n {
			return nil, fmt.Errorf("the counts of the spellings of %q add up to more than %d", slug, uint64(math.MaxUint64))
		}
		counts[slug] += n
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		more := ""
		if len(bad) > maxNamedSlugs {
			more = fmt.Sprintf(" and %d more", len(bad)-maxNamedSlugs)
			bad = bad[:maxNamedSlugs]
		}
		return nil, fmt.Errorf("%w: nothing was seeded; fix or remove %s%s", usertext.ErrInvalidSlug, strings.Join(bad, ", "), more)
	}
	return counts, nil
}

var _ viewSeeder = (*store.Store)(nil)
