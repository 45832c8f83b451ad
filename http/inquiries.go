package http

import (
	"net/mail"
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
	req, err := decodeInquiry(c.Body())
	if err != nil {
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

// decodeInquiry reads and checks an inquiry's body; name and e-mail refuse control,
// bidi and invisible characters, the message loses the bidi and invisible ones.
func decodeInquiry(body []byte) (inquiryRequest, error) {
	var req inquiryRequest
	if err := decodeBlogJSON(body, &req); err != nil {
		return req, err
	}
	var err error
	if req.Name, err = lineField("name", req.Name, 1, inquiryNameMax); err != nil {
		return req, err
	}
	if req.Email, err = lineField("email", req.Email, 3, inquiryEmailMax); err != nil {
		return req, err
	}
	// A bare address only: a display name or comment would let a form fill smuggle
	// another recipient into a reply.
	if a, err := mail.ParseAddress(req.Email); err != nil || a.Address != req.Email {
		return req, badRequest("invalid_email", "email must be a plain address such as name@example.com")
	}
	if req.Message, err = contentField("message", req.Message, 1, inquiryMessageMax); err != nil {
		return req, err
	}
	return req, nil
}
