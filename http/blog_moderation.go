package http

import (
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/store"
)

// BlogModeration is what the console's moderation view and visitor map need beyond
// the seed's admin API.
type BlogModeration interface {
	MarkInquiryRead(id uint64) (store.Inquiry, error)
	RecentVisitors(limit int) ([]store.Visitor, error)
}

var _ BlogModeration = (*store.Store)(nil)

// adminMarkInquiryRead marks an inquiry read and answers it
// (POST /api/admin/inquiries/:id/read).
func (s *Server) adminMarkInquiryRead(c *fiber.Ctx) error {
	id, err := strconv.ParseUint(c.Params("id"), 10, 64)
	if err != nil || id == 0 {
		return badRequest("bad_id", "the inquiry id must be a positive integer")
	}
	q, err := s.deps.Blog.MarkInquiryRead(id)
	if errors.Is(err, store.ErrNotFound) {
		return newError(fiber.StatusNotFound, "not_found", "no such inquiry: it was never sent or is older than the newest "+strconv.Itoa(store.InquiryCap))
	}
	if err != nil {
		return s.blogError(c, err)
	}
	return c.JSON(q)
}

// adminVisitors lists the visitor log's newest hits with where they came from, for
// the console's map (GET /api/admin/visitors?limit=). It leaves the IP out: a map
// does not need it.
func (s *Server) adminVisitors(c *fiber.Ctx) error {
	limit, err := queryLimit(c, store.VisitorCap, store.VisitorCap)
	if err != nil {
		return err
	}
	vs, err := s.deps.Blog.RecentVisitors(limit)
	if err != nil {
		return s.blogError(c, err)
	}
	out := api.Visitors{Visitors: make([]api.VisitorPoint, 0, len(vs))}
	for _, v := range vs {
		out.Visitors = append(out.Visitors, api.VisitorPoint{TS: v.TS.UTC(), Country: v.Country, City: v.City, Lat: v.Lat, Lon: v.Lon})
	}
	return c.JSON(out)
}
