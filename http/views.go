package http

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// viewResponse is the shape of a view answer; countView and viewTotal write it with
// appendViewJSON, which the tests hold to json.Marshal of this struct.
type viewResponse struct {
	Slug    string `json:"slug"`
	Views   uint64 `json:"views"`
	Counted *bool  `json:"counted,omitempty"`
}

type viewTotalsResponse struct {
	Views map[string]uint64 `json:"views"`
}

// countView counts a view (POST /api/views/:slug) unless the client viewed the slug in
// the last 30 minutes, and answers the current total either way.
func (s *Server) countView(c *fiber.Ctx) error {
	slug, err := pathSlug(c.Params("*"))
	if err != nil {
		return err
	}
	res, err := s.deps.Blog.RecordView(s.hit(c, slug))
	if err != nil {
		return s.blogError(c, err)
	}
	var buf [viewJSONBuf]byte
	return sendJSON(c, appendViewJSON(buf[:0], slug, res.Total, &res.Counted))
}

// viewTotal reads one total without counting (GET /api/views/:slug).
func (s *Server) viewTotal(c *fiber.Ctx) error {
	slug, err := pathSlug(c.Params("*"))
	if err != nil {
		return err
	}
	totals, err := s.deps.Blog.ViewTotals([]string{slug})
	if err != nil {
		return s.blogError(c, err)
	}
	var buf [viewJSONBuf]byte
	return sendJSON(c, appendViewJSON(buf[:0], slug, totals[slug], nil))
}

// viewTotals reads many totals without counting (GET /api/views?slugs=a,b,c), for a
// list page that shows a count next to each post. The answer's keys are the slugs in
// NFC, as stored; a slug holding a comma can only be read on its own. The parameter
// may also repeat (?slugs=a&slugs=b): every one is read, and the bound counts them all.
func (s *Server) viewTotals(c *fiber.Ctx) error {
	values := c.Context().QueryArgs().PeekMulti("slugs")
	if len(values) == 0 || len(values) == 1 && len(values[0]) == 0 {
		return badRequest("missing_slugs", "pass slugs as ?slugs=a,b,c")
	}
	var parts []string
	for _, v := range values {
		parts = append(parts, strings.Split(string(v), ",")...)
		if len(parts) > maxSlugsPerRequest {
			return badRequest("too_many_slugs", "at most "+strconv.Itoa(maxSlugsPerRequest)+" slugs per request")
		}
	}
	seen := make(map[string]bool, len(parts))
	slugs := make([]string, 0, len(parts))
	for _, raw := range parts {
		slug, err := querySlug(raw)
		if err != nil {
			return err
		}
		if !seen[slug] {
			seen[slug] = true
			slugs = append(slugs, slug)
		}
	}
	totals, err := s.deps.Blog.ViewTotals(slugs)
	if err != nil {
		return s.blogError(c, err)
	}
	return c.JSON(viewTotalsResponse{Views: totals})
}
