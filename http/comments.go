package http

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/store"
)

// Comment field limits, in characters.
const (
	commentNameMin, commentNameMax         = 1, 40
	commentContentMin, commentContentMax   = 1, 2000
	commentPasswordMin, commentPasswordMax = 4, 72
)

// publicComment is the only shape the public API returns: no ip, no password hash,
// whatever store.Comment grows.
type publicComment struct {
	ID        uint64     `json:"id"`
	Slug      string     `json:"slug"`
	Name      string     `json:"name"`
	Content   string     `json:"content"`
	CreatedAt time.Time  `json:"created_at"`
	EditedAt  *time.Time `json:"edited_at"`
}

func toPublic(c store.Comment) publicComment {
	return publicComment{ID: c.ID, Slug: c.Slug, Name: c.Name, Content: c.Content, CreatedAt: c.CreatedAt, EditedAt: c.EditedAt}
}

type commentsResponse struct {
	Comments []publicComment `json:"comments"`
}

type newCommentRequest struct {
	Name     string `json:"name"`
	Content  string `json:"content"`
	Password string `json:"password"`
}

type editCommentRequest struct {
	Content  string `json:"content"`
	Password string `json:"password"`
}

type deleteCommentRequest struct {
	Password string `json:"password"`
}

// listComments answers a slug's comments, oldest first (GET /api/comments/:slug).
func (s *Server) listComments(c *fiber.Ctx) error {
	slug := c.Params("*")
	if err := validSlug(slug); err != nil {
		return err
	}
	list, err := s.deps.Blog.Comments(slug, commentsPerPage)
	if err != nil {
		return s.blogError(c, err)
	}
	out := commentsResponse{Comments: make([]publicComment, len(list))}
	for i, cm := range list {
		out.Comments[i] = toPublic(cm)
	}
	return c.JSON(out)
}

// addComment stores a comment (POST /api/comments/:slug) and answers 201 with it.
func (s *Server) addComment(c *fiber.Ctx) error {
	slug := c.Params("*")
	if err := validSlug(slug); err != nil {
		return err
	}
	var req newCommentRequest
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	req.Name = strings.TrimSpace(req.Name)
	if err := textField("name", req.Name, commentNameMin, commentNameMax, false); err != nil {
		return err
	}
	if err := textField("content", req.Content, commentContentMin, commentContentMax, true); err != nil {
		return err
	}
	if err := passwordField(req.Password); err != nil {
		return err
	}
	ip := s.clientIP(c)
	if err := s.allowWrite(c, ip); err != nil {
		return err
	}
	cm, err := s.deps.Blog.AddComment(store.NewComment{Slug: slug, Name: req.Name, Content: req.Content, Password: req.Password, IP: ip})
	if err != nil {
		return s.blogError(c, err)
	}
	return c.Status(fiber.StatusCreated).JSON(toPublic(cm))
}

// editComment replaces a comment's content given its password (PUT /api/comments/:slug/:id).
func (s *Server) editComment(c *fiber.Ctx) error {
	slug, id, err := commentPath(c)
	if err != nil {
		return err
	}
	var req editCommentRequest
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	if err := textField("content", req.Content, commentContentMin, commentContentMax, true); err != nil {
		return err
	}
	if err := passwordField(req.Password); err != nil {
		return err
	}
	if err := s.allowWrite(c, s.clientIP(c)); err != nil {
		return err
	}
	cm, err := s.deps.Blog.EditComment(slug, id, req.Password, req.Content)
	if err != nil {
		return s.blogError(c, err)
	}
	return c.JSON(toPublic(cm))
}

// deleteComment deletes a comment given its password (DELETE /api/comments/:slug/:id).
func (s *Server) deleteComment(c *fiber.Ctx) error {
	slug, id, err := commentPath(c)
	if err != nil {
		return err
	}
	var req deleteCommentRequest
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	if err := passwordField(req.Password); err != nil {
		return err
	}
	if err := s.allowWrite(c, s.clientIP(c)); err != nil {
		return err
	}
	if err := s.deps.Blog.DeleteComment(slug, id, req.Password); err != nil {
		return s.blogError(c, err)
	}
	return c.JSON(fiber.Map{"id": id, "deleted": true})
}

// commentPath splits "/api/comments/{slug}/{id}": the id is the last segment.
func commentPath(c *fiber.Ctx) (string, uint64, error) {
	rest := c.Params("*")
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return "", 0, badRequest("bad_path", "use /api/comments/{slug}/{id}")
	}
	slug, rawID := rest[:i], rest[i+1:]
	if err := validSlug(slug); err != nil {
		return "", 0, err
	}
	id, err := strconv.ParseUint(rawID, 10, 64)
	if err != nil || id == 0 {
		return "", 0, badRequest("bad_id", "the comment id must be a positive integer")
	}
	return slug, id, nil
}

func passwordField(p string) error {
	if n := len([]rune(p)); n < commentPasswordMin || n > commentPasswordMax {
		return badRequest("invalid_password", "password must be "+strconv.Itoa(commentPasswordMin)+" to "+strconv.Itoa(commentPasswordMax)+" characters")
	}
	return nil
}
