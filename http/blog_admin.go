package http

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/http/api"
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
