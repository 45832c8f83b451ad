package components

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/tui/styles"
)

// TestLandOutline: the coarse outline puts well-known places on land and well-known
// seas in water, so a reader can find their way on the map.
func TestLandOutline(t *testing.T) {
	tests := []struct {
		name     string
		lat, lon float64
		land     bool
	}{
		{"Seoul", 37.57, 126.98, true}, {"Tokyo", 35.68, 139.69, true}, {"Paris", 48.86, 2.35, true},
		{"Kansas", 38.5, -98, true}, {"Brasília", -15.8, -47.9, true}, {"Nairobi", -1.3, 36.8, true},
		{"Alice Springs", -23.7, 133.9, true}, {"Moscow", 55.75, 37.6, true}, {"Delhi", 28.6, 77.2, true},
		{"mid-Pacific", 0, -150, false}, {"mid-Atlantic", 30, -40, false}, {"Indian Ocean", -20, 80, false},
		{"Black Sea", 43.2, 34, false}, {"Caspian Sea", 42, 50.5, false}, {"Sea of Japan", 40, 134, false},
	}
	for _, tt := range tests {
		if got := onLand(tt.lon, tt.lat); got != tt.land {
			t.Errorf("%s (%.1f, %.1f): land = %v, want %v", tt.name, tt.lat, tt.lon, got, tt.land)
		}
	}
}

func TestWorldMapPlacesVisitors(t *testing.T) {
	st := styles.DefaultStyles(nil)
	m := NewWorldMap(60, MapRows(60))
	if w, h := m.Size(); w != 60 || h != 12 {
		t.Fatalf("size = %dx%d, want 60x12 (the projection's 360:142 in square dots)", w, h)
	}
	seoul := GeoPoint{37.57, 126.98}
	x, y, ok := m.Cell(seoul)
	if !ok || x != 51 || y != 3 {
		t.Fatalf("Seoul in cell (%d,%d) %v, want (51,3)", x, y, ok)
	}
	if _, _, ok := m.Cell(GeoPoint{-75, 0}); ok {
		t.Fatal("Antarctica is below the map and must not be drawn on its last row")
	}
	pts := []GeoPoint{seoul, seoul, seoul, seoul, {51.5, -0.1}}
	lines := strings.Split(m.Render(st, pts), "\n")
	if len(lines) != 12 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, l := range lines {
		if w := lipgloss.Width(l); w != 60 {
			t.Fatalf("line %d is %d wide", i, w)
		}
	}
	if got := []rune(lines[y])[x]; got != '●' {
		t.Fatalf("Seoul's cell shows %q, want the busiest glyph", got)
	}
	lx, ly, _ := m.Cell(GeoPoint{51.5, -0.1})
	if got := []rune(lines[ly])[lx]; got != '·' && got != '•' {
		t.Fatalf("London's cell shows %q, want a lesser glyph", got)
	}
}

func TestDensityLevel(t *testing.T) {
	tests := []struct{ n, top, want int }{
		{1, 1, 2}, {1, 100, 0}, {10, 100, 1}, {100, 100, 2}, {50, 100, 2},
	}
	for _, tt := range tests {
		if got := DensityLevel(tt.n, tt.top); got != tt.want {
			t.Errorf("DensityLevel(%d, %d) = %d, want %d", tt.n, tt.top, got, tt.want)
		}
	}
}
