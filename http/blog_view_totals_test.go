package http_test

import (
	"net/http"
	"strings"
	"testing"
)

// ?slugs=a&slugs=b (how URLSearchParams.append and many query builders write a list)
// was answered 200 with a's total only: b was silently left out. Every slugs
// parameter is read now, and the bound counts them all.
func TestBlogViewTotalsReadsEverySlugsParameter(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	for _, slug := range []string{"a", "b", "c"} {
		wantStatus(t, env.do(t, http.MethodPost, "/api/views/"+slug, nil, blogIPHeader, "192.0.2.50"), 200, "")
	}
	r := env.do(t, http.MethodGet, "/api/views?slugs=a&slugs=b,c", nil)
	wantStatus(t, r, 200, "")
	var got struct{ Views map[string]uint64 }
	r.JSON(t, &got)
	if len(got.Views) != 3 || got.Views["a"] != 1 || got.Views["b"] != 1 || got.Views["c"] != 1 {
		t.Fatalf("views = %v, want a, b and c at 1: %s", got.Views, r.Body)
	}
	over := "/api/views?slugs=" + strings.Repeat("a,", 60) + "a&slugs=" + strings.Repeat("b,", 40) + "b"
	wantStatus(t, env.do(t, http.MethodGet, over, nil), 400, "too_many_slugs")
	wantStatus(t, env.do(t, http.MethodGet, "/api/views?slugs=a&slugs=", nil), 400, "invalid_slug")
}
