package components

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/tui/keymap"
	"github.com/hangarhq/hangar/tui/styles"
)

// Column is a table column that takes a share of the spare width above its minimum.
// When the minimums do not fit, columns with the highest Drop rank are hidden first;
// rank 0 is never hidden. A Fit column (an id) is never narrower than its widest
// cell: it is hidden whole rather than shown cut.
type Column struct {
	Title string
	Min   int
	Flex  int
	Drop  int
	Fit   bool
}

// Row is one line of a table; Key names the item it shows (an order id, a user id, a
// slug) so the cursor can follow the item, not the position, when rows change.
type Row struct {
	Key   string
	Cells []string
}

// Table is a scrolling table whose cursor stays on the same item across SetRows.
// bubbles/table keeps a row index and a viewport offset that drift when rows are
// replaced; acting on the row under the cursor must act on the item the operator saw.
type Table struct {
	st     styles.Styles
	km     keymap.KeyMap
	cols   []Column
	widths []int
	rows   []Row
	cursor int
	offset int
	width  int
	height int // header included
}

// headerLines is the title line and the rule under it.
const headerLines = 2

// NewTable builds an empty table.
func NewTable(st styles.Styles, km keymap.KeyMap, cols []Column) Table {
	t := Table{st: st, km: km, cols: cols, width: 80, height: 10}
	t.fit()
	return t
}

// SetSize gives the table w columns and h lines, header included.
func (t *Table) SetSize(w, h int) {
	t.width, t.height = w, max(headerLines+1, h)
	t.fit()
	t.clamp()
}

func (t *Table) Width() int { return t.width }

// Widths are the columns' widths as last fitted; 0 is a hidden column.
func (t *Table) Widths() []int { return t.widths }

func (t *Table) fit() {
	cols := t.cols
	if t.hasFit() {
		cols = make([]Column, len(t.cols))
		copy(cols, t.cols)
		for i, c := range cols {
			if !c.Fit {
				continue
			}
			for _, r := range t.rows {
				if i < len(r.Cells) {
					cols[i].Min = max(cols[i].Min, lipgloss.Width(r.Cells[i]))
				}
			}
		}
	}
	t.widths = FitColumns(cols, t.width)
}

func (t *Table) hasFit() bool {
	for _, c := range t.cols {
		if c.Fit {
			return true
		}
	}
	return false
}

// SetRows replaces the rows. The cursor stays on the row with the key it was on; if
// that item left, it stays at the same position, which is now the next item.
func (t *Table) SetRows(rows []Row) {
	key, had := t.SelectedKey()
	t.rows = rows
	if had {
		for i, r := range rows {
			if r.Key == key {
				t.cursor = i
				break
			}
		}
	}
	t.fit()
	t.clamp()
}

// Top puts the cursor on the first row and scrolls to it: after a sort or a filter
// change the operator reads the list from its start.
func (t *Table) Top() {
	t.cursor, t.offset = 0, 0
}

// Select puts the cursor on the row with key, if there is one.
func (t *Table) Select(key string) bool {
	for i, r := range t.rows {
		if r.Key == key {
			t.cursor = i
			t.clamp()
			return true
		}
	}
	return false
}

func (t *Table) Rows() []Row { return t.rows }
func (t *Table) Len() int    { return len(t.rows) }
func (t *Table) Cursor() int { return t.cursor }

// Offset is the index of the first row on screen.
func (t *Table) Offset() int { return t.offset }

// SelectedKey is the key of the row under the cursor.
func (t *Table) SelectedKey() (string, bool) {
	if t.cursor < 0 || t.cursor >= len(t.rows) {
		return "", false
	}
	return t.rows[t.cursor].Key, true
}

// Selected returns the item of list whose key (as the rows were keyed) the cursor is
// on: views keep their items and look the cursor's up by identity, never by position.
func Selected[T any](t *Table, list []T, key func(T) string) (T, bool) {
	var zero T
	k, ok := t.SelectedKey()
	if !ok {
		return zero, false
	}
	for _, x := range list {
		if key(x) == k {
			return x, true
		}
	}
	return zero, false
}

// visible is how many rows fit under the header.
func (t *Table) visible() int { return max(1, t.height-headerLines) }

// clamp keeps the cursor on a row and the offset such that the cursor is on screen and
// no screen line is left empty while rows above are scrolled out.
func (t *Table) clamp() {
	n, vis := len(t.rows), t.visible()
	t.cursor = min(max(t.cursor, 0), max(n-1, 0))
	t.offset = min(t.offset, t.cursor)
	if t.cursor >= t.offset+vis {
		t.offset = t.cursor - vis + 1
	}
	t.offset = max(0, min(t.offset, n-vis))
}

// Update moves the cursor for the navigation keys and reports whether it took the key.
func (t *Table) Update(msg tea.KeyMsg) bool {
	vis := t.visible()
	switch {
	case key.Matches(msg, t.km.Up):
		t.cursor--
	case key.Matches(msg, t.km.Down):
		t.cursor++
	default:
		switch msg.String() {
		case "pgup", "ctrl+b":
			t.cursor -= vis
		case "pgdown", "ctrl+f", " ":
			t.cursor += vis
		case "home":
			t.cursor = 0
		case "end":
			t.cursor = len(t.rows) - 1
		default:
			return false
		}
	}
	t.clamp()
	return true
}

// View draws the header and the rows on screen, each cell cut to its column.
func (t *Table) View() string {
	var head []string
	for i, c := range t.cols {
		if t.widths[i] <= 0 {
			continue
		}
		head = append(head, t.st.TableHead.Render(pad(Truncate(c.Title, t.widths[i]), t.widths[i])))
	}
	lines := []string{lipgloss.JoinHorizontal(lipgloss.Top, head...)}
	end := min(len(t.rows), t.offset+t.visible())
	for i := t.offset; i < end; i++ {
		var cells []string
		for j, v := range t.rows[i].Cells {
			if j >= len(t.widths) || t.widths[j] <= 0 {
				continue
			}
			cells = append(cells, t.st.TableCell.Render(pad(Truncate(v, t.widths[j]), t.widths[j])))
		}
		row := strings.Join(cells, "")
		if i == t.cursor {
			row = t.st.TableSel.Render(row)
		}
		lines = append(lines, row)
	}
	return strings.Join(lines, "\n")
}

func pad(s string, w int) string {
	if n := w - lipgloss.Width(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// FitColumns spreads width over the columns and returns each one's width, 0 for a
// hidden one; each cell has one space of padding on either side, hence the 2 per
// column.
func FitColumns(cols []Column, width int) []int {
	hidden := make([]bool, len(cols))
	used := 0
	for _, c := range cols {
		used += c.Min + 2
	}
	for used > width {
		worst := -1
		for i, c := range cols {
			if !hidden[i] && c.Drop > 0 && (worst < 0 || c.Drop > cols[worst].Drop) {
				worst = i
			}
		}
		if worst < 0 {
			break
		}
		hidden[worst] = true
		used -= cols[worst].Min + 2
	}
	flex := 0
	for i, c := range cols {
		if !hidden[i] {
			flex += c.Flex
		}
	}
	spare := max(0, width-used)
	out := make([]int, len(cols))
	given := 0
	for i, c := range cols {
		if hidden[i] {
			continue
		}
		w := c.Min
		if flex > 0 && c.Flex > 0 {
			extra := spare * c.Flex / flex
			w += extra
			given += extra
		}
		out[i] = w
	}
	// Rounding leftovers go to the last flexible column so rows fill the width.
	for i := len(cols) - 1; i >= 0; i-- {
		if cols[i].Flex > 0 && !hidden[i] {
			out[i] += spare - given
			break
		}
	}
	return out
}
