package components

import (
	"strconv"
	"testing"

	"github.com/hangarhq/hangar/tui/keymap"
	"github.com/hangarhq/hangar/tui/styles"
)

func rows(keys ...int) []Row {
	out := make([]Row, len(keys))
	for i, k := range keys {
		s := strconv.Itoa(k)
		out[i] = Row{Key: s, Cells: []string{s}}
	}
	return out
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// TestTableFollowsKey replaces the rows under a cursor and checks where it lands and
// what is on screen: 5 rows fit under the header.
func TestTableFollowsKey(t *testing.T) {
	tests := []struct {
		name       string
		before     []int
		cursor     int
		after      []int
		wantKey    string
		wantOffset int
	}{
		{"new rows above", []int{5, 4, 3, 2, 1}, 1, []int{7, 6, 5, 4, 3, 2, 1}, "4", 0},
		{"row moved down past the screen", seq(1, 10), 2, append(seq(4, 10), 1, 2, 3), "3", 5},
		{"row left: next one takes its place", []int{5, 4, 3, 2, 1}, 2, []int{5, 4, 2, 1}, "2", 0},
		{"last row left", []int{5, 4, 3}, 2, []int{5, 4}, "4", 0},
		{"list shrank under the offset", seq(1, 20), 19, seq(1, 6), "6", 1},
		{"emptied", []int{1, 2}, 1, nil, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := NewTable(styles.DefaultStyles(nil), keymap.DefaultKeyMap(), []Column{{Title: "k", Min: 3}})
			tb.SetSize(20, 7)
			tb.SetRows(rows(tt.before...))
			for range tt.cursor {
				tb.cursor++
				tb.clamp()
			}
			tb.SetRows(rows(tt.after...))
			key, _ := tb.SelectedKey()
			if key != tt.wantKey || tb.Offset() != tt.wantOffset {
				t.Fatalf("key %q offset %d, want %q offset %d", key, tb.Offset(), tt.wantKey, tt.wantOffset)
			}
			if vis := tb.visible(); tb.Len() > 0 && (tb.Cursor() < tb.Offset() || tb.Cursor() >= tb.Offset()+vis) {
				t.Fatalf("cursor %d off screen (offset %d, %d visible)", tb.Cursor(), tb.Offset(), vis)
			}
		})
	}
}

func TestTableFitColumnKeepsWholeIDs(t *testing.T) {
	tb := NewTable(styles.DefaultStyles(nil), keymap.DefaultKeyMap(), []Column{
		{Title: "id", Min: 2, Fit: true}, {Title: "user", Min: 4, Drop: 1, Fit: true}, {Title: "text", Min: 4, Flex: 1},
	})
	tb.SetRows([]Row{{Key: "1", Cells: []string{"1", "7000012345", "hello"}}})
	for _, tt := range []struct{ width, user int }{{80, 10}, {22, 10}, {21, 0}} {
		tb.SetSize(tt.width, 5)
		if got := tb.Widths()[1]; got != tt.user {
			t.Errorf("width %d: user column %d, want %d (whole or hidden)", tt.width, got, tt.user)
		}
	}
}
