package http

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/store"
)

// blogStats answers GET /api/admin/stats. The shape is store.BlogStats', which the
// console parses.
func (s *Server) blogStats(c *fiber.Ctx) error {
	st, err := s.deps.Blog.BlogStats(statsTopSlugs, statsDays, statsRecent)
	if err != nil {
		return s.blogError(c, err)
	}
	return c.JSON(st)
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
