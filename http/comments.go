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
	// Next is the after= of the following page; absent on the last one.
	Next uint64 `json:"next,omitempty"`
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

// listComments answers a slug's comments, oldest first (GET /api/comments/:slug),
// a page at a time: ?after= is the last id the client has (next in the page before),
// ?limit= caps the page (default and most commentsPerPage), and a page also ends
// before commentsPageBytes of names and content, so no reader is answered megabytes.
func (s *Server) listComments(c *fiber.Ctx) error {
	slug, err := pathSlug(c.Params("*"))
	if err != nil {
		return err
	}
	limit, err := queryLimit(c, commentsPerPage, commentsPerPage)
	if err != nil {
		return err
	}
	var after uint64
	if v := c.Query("after"); v != "" {
		if after, err = strconv.ParseUint(v, 10, 64); err != nil {
			return badRequest("bad_after", "after must be a comment id (next in the page before)")
		}
	}
	list, more, err := s.deps.Blog.CommentsPage(slug, after, limit, commentsPageBytes)
	if err != nil {
		return s.blogError(c, err)
	}
	out := commentsResponse{Comments: make([]publicComment, len(list))}
	for i, cm := range list {
		out.Comments[i] = toPublic(cm)
	}
	if more && len(list) > 0 {
		out.Next = list[len(list)-1].ID
	}
	return c.JSON(out)
}

// addComment stores a comment (POST /api/comments/:slug) and answers 201 with it.
func (s *Server) addComment(c *fiber.Ctx) error {
	slug, err := pathSlug(c.Params("*"))
	if err != nil {
		return err
	}
	req, err := decodeNewComment(c.Body())
	if err != nil {
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

// decodeNewComment reads and checks a new comment's body; what it returns is what is
// stored: the name and content in NFC, the content without bidi or invisible
// characters.
func decodeNewComment(body []byte) (newCommentRequest, error) {
	var req newCommentRequest
	if err := decodeBlogJSON(body, &req); err != nil {
		return req, err
	}
	var err error
	if req.Name, err = lineField("name", req.Name, commentNameMin, commentNameMax); err != nil {
		return req, err
	}
	if req.Content, err = contentField("content", req.Content, commentContentMin, commentContentMax); err != nil {
		return req, err
	}
	return req, passwordField(req.Password)
}

// editComment replaces a comment's content given its password (PUT /api/comments/:slug/:id).
func (s *Server) editComment(c *fiber.Ctx) error {
	slug, id, err := commentPath(c)
	if err != nil {
		return err
	}
	req, err := decodeEditComment(c.Body())
	if err != nil {
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

func decodeEditComment(body []byte) (editCommentRequest, error) {
	var req editCommentRequest
	if err := decodeBlogJSON(body, &req); err != nil {
		return req, err
	}
	var err error
	if req.Content, err = contentField("content", req.Content, commentContentMin, commentContentMax); err != nil {
		return req, err
	}
	return req, passwordField(req.Password)
}

// deleteComment deletes a comment given its password (DELETE /api/comments/:slug/:id).
func (s *Server) deleteComment(c *fiber.Ctx) error {
	slug, id, err := commentPath(c)
	if err != nil {
		return err
	}
	req, err := decodeDeleteComment(c.Body())
	if err != nil {
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

func decodeDeleteComment(body []byte) (deleteCommentRequest, error) {
	var req deleteCommentRequest
	if err := decodeBlogJSON(body, &req); err != nil {
		return req, err
	}
	return req, passwordField(req.Password)
}

// commentPath splits "/api/comments/{slug}/{id}" as sent, before decoding, so that an
// encoded "/" (%2F) in the slug cannot move the split: the id is the last segment.
func commentPath(c *fiber.Ctx) (string, uint64, error) {
	rest := c.Params("*")
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return "", 0, badRequest("bad_path", "use /api/comments/{slug}/{id}")
	}
	rawSlug, rawID := rest[:i], rest[i+1:]
	slug, err := pathSlug(rawSlug)
	if err != nil {
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
