package store

import (
	"math"
	"strings"
	"testing"
)

// CommentsPage pages by id: a deleted comment is skipped, a page holds at least one
// comment however long, and the byte bound ends a page before it is passed.
func TestCommentsPage(t *testing.T) {
	s, _ := blogSetup(t)
	var ids []uint64
	for _, content := range []string{"one", strings.Repeat("x", 100), "three", "four"} {
		c, err := s.AddComment(NewComment{Slug: "p", Name: "n", Content: content, Password: "pppp"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	if err := s.AdminDeleteComment(ids[2]); err != nil {
		t.Fatal(err)
	}
	got := func(after uint64, limit, maxBytes int) (out []uint64, more bool) {
		t.Helper()
		page, more, err := s.CommentsPage("p", after, limit, maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page {
			out = append(out, c.ID)
		}
		return out, more
	}
	tests := []struct {
		name            string
		after           uint64
		limit, maxBytes int
		want            []uint64
		more            bool
	}{
		{"all", 0, 10, 0, []uint64{ids[0], ids[1], ids[3]}, false},
		{"by limit", 0, 1, 0, []uint64{ids[0]}, true},
		{"after the first", ids[0], 10, 0, []uint64{ids[1], ids[3]}, false},
		{"after the deleted one", ids[2], 10, 0, []uint64{ids[3]}, false},
		{"after the last", ids[3], 10, 0, nil, false},
		{"after the largest id", math.MaxUint64, 10, 0, nil, false},
		{"the byte bound stops before the long one", 0, 10, 50, []uint64{ids[0]}, true},
		{"one comment over the bound still comes", ids[0], 10, 50, []uint64{ids[1]}, true},
	}
	for _, tt := range tests {
		ids, more := got(tt.after, tt.limit, tt.maxBytes)
		if len(ids) != len(tt.want) || more != tt.more {
			t.Fatalf("%s: %v more=%v, want %v more=%v", tt.name, ids, more, tt.want, tt.more)
		}
		for i := range ids {
			if ids[i] != tt.want[i] {
				t.Fatalf("%s: %v, want %v", tt.name, ids, tt.want)
			}
		}
	}
}
