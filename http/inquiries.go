package http

import (
	"net/mail"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/store"
)

// Inquiry field limits, in characters.
const (
	inquiryNameMax    = 100
	inquiryEmailMax   = 254
	inquiryMessageMax = 5000
)

type inquiryRequest struct {
	Name    string `json:"name"`
	Email   string `json:"email"`
	Message string `json:"message"`
}

type inquiryResponse struct {
	ID        uint64    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
}

// addInquiry stores a contact-form message (POST /api/inquiries), answering 201.
func (s *Server) addInquiry(c *fiber.Ctx) error {
	var req inquiryRequest
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	req.Name, req.Email = strings.TrimSpace(req.Name), strings.TrimSpace(req.Email)
	if err := textField("name", req.Name, 1, inquiryNameMax, false); err != nil {
		return err
	}
	if err := textField("email", req.Email, 3, inquiryEmailMax, false); err != nil {
		return err
	}
	// A bare address only: a display name or comment would let a form fill smuggle
	// another recipient into a reply.
	if a, err := mail.ParseAddress(req.Email); err != nil || a.Address != req.Email {
		return badRequest("invalid_email", "email must be a plain address such as name@example.com")
	}
	if err := textField("message", req.Message, 1, inquiryMessageMax, true); err != nil {
		return err
	}
	ip := s.clientIP(c)
	if err := s.allowWrite(c, ip); err != nil {
		return err
	}
	q, err := s.deps.Blog.AddInquiry(store.Inquiry{Name: req.Name, Email: req.Email, Message: req.Message, IP: ip})
	if err != nil {
		return s.blogError(c, err)
	}
	return c.Status(fiber.StatusCreated).JSON(inquiryResponse{ID: q.ID, CreatedAt: q.CreatedAt})
}
