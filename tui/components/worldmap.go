package components

import (
	"math"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/tui/styles"
)

// The map shows latitudes from MapNorth to MapSouth: the Arctic islands down to Cape
// Horn. Antarctica has no readers to plot and would take a sixth of the rows.
const (
	MapNorth = 84.0
	MapSouth = -58.0
)

// GeoPoint is one located visitor.
type GeoPoint struct{ Lat, Lon float64 }

// MapRows is how many rows a map w columns wide takes so that the equirectangular
// projection keeps its shape: a braille cell is 2 dots wide and 4 high, and a terminal
// cell about twice as high as wide, so each dot is about square.
func MapRows(w int) int {
	return max(1, int(math.Round(float64(2*w)*(MapNorth-MapSouth)/360/4)))
}

// WorldMap is a braille world map of a fixed size: land as dots, and the cells that
// hold visitors as a glyph by how many (· few, • more, ● most).
type WorldMap struct {
	w, h int
	land []uint8 // one braille dot pattern per cell, row-major
}

// brailleDot is the bit of the dot at column x (0-1) and row y (0-3) of a braille cell.
var brailleDot = [4][2]uint8{{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}}

// NewWorldMap rasterises the land outline for a map of w×h cells. It costs a few
// milliseconds: keep the map while the size stays.
func NewWorldMap(w, h int) *WorldMap {
	m := &WorldMap{w: max(1, w), h: max(1, h)}
	m.land = make([]uint8, m.w*m.h)
	dw, dh := 2*m.w, 4*m.h
	for dy := range dh {
		lat := MapNorth - (float64(dy)+0.5)*(MapNorth-MapSouth)/float64(dh)
		for dx := range dw {
			lon := -180 + (float64(dx)+0.5)*360/float64(dw)
			if onLand(lon, lat) {
				m.land[(dy/4)*m.w+dx/2] |= brailleDot[dy%4][dx%2]
			}
		}
	}
	return m
}

func (m *WorldMap) Size() (w, h int) { return m.w, m.h }

// landBoxes are the polygons' bounding boxes (west, south, east, north): most points
// are outside most polygons, and the box says so without walking the outline.
var landBoxes = func() [][4]float64 {
	out := make([][4]float64, len(landPolygons))
	for i, p := range landPolygons {
		b := [4]float64{180, 90, -180, -90}
		for j := 0; j+1 < len(p); j += 2 {
			b[0], b[1], b[2], b[3] = min(b[0], p[j]), min(b[1], p[j+1]), max(b[2], p[j]), max(b[3], p[j+1])
		}
		out[i] = b
	}
	return out
}()

// onLand fills the outline by the even-odd rule, so seas drawn inside land are water.
func onLand(lon, lat float64) bool {
	in := false
	for k, p := range landPolygons {
		if b := landBoxes[k]; lon < b[0] || lat < b[1] || lon > b[2] || lat > b[3] {
			continue
		}
		n := len(p) / 2
		for i, j := 0, n-1; i < n; j, i = i, i+1 {
			xi, yi, xj, yj := p[2*i], p[2*i+1], p[2*j], p[2*j+1]
			if (yi > lat) != (yj > lat) && lon < (xj-xi)*(lat-yi)/(yj-yi)+xi {
				in = !in
			}
		}
	}
	return in
}

// Cell is the map cell a point falls in, and whether it is on the map at all.
func (m *WorldMap) Cell(p GeoPoint) (x, y int, ok bool) {
	if p.Lat > MapNorth || p.Lat < MapSouth || p.Lon < -180 || p.Lon > 180 {
		return 0, 0, false
	}
	x = min(m.w-1, int((p.Lon+180)/360*float64(m.w)))
	y = min(m.h-1, int((MapNorth-p.Lat)/(MapNorth-MapSouth)*float64(m.h)))
	return x, y, true
}

// densityGlyphs mark a cell's visitors from few to most.
var densityGlyphs = []string{"·", "•", "●"}

// Render draws the map with pts on it. A cell's glyph grows with the log of its count
// against the busiest cell's, so one city with most readers does not blank the rest.
func (m *WorldMap) Render(st styles.Styles, pts []GeoPoint) string {
	counts := make([]int, m.w*m.h)
	top := 0
	for _, p := range pts {
		if x, y, ok := m.Cell(p); ok {
			counts[y*m.w+x]++
			top = max(top, counts[y*m.w+x])
		}
	}
	styleFor := []lipgloss.Style{st.Warn, st.Warn, st.Alarm}
	var b strings.Builder
	for y := range m.h {
		if y > 0 {
			b.WriteByte('\n')
		}
		var land strings.Builder
		flush := func() {
			if land.Len() > 0 {
				b.WriteString(st.Muted.Render(land.String()))
				land.Reset()
			}
		}
		for x := range m.w {
			i := y*m.w + x
			if n := counts[i]; n > 0 {
				lvl := DensityLevel(n, top)
				flush()
				b.WriteString(styleFor[lvl].Render(densityGlyphs[lvl]))
				continue
			}
			if m.land[i] == 0 {
				land.WriteByte(' ')
			} else {
				land.WriteRune(rune(0x2800 + int(m.land[i])))
			}
		}
		flush()
	}
	return b.String()
}

// DensityLevel is 0, 1 or 2 for n visitors in a cell when the busiest cell has top.
func DensityLevel(n, top int) int {
	if top <= 1 {
		return len(densityGlyphs) - 1
	}
	f := math.Log1p(float64(n)) / math.Log1p(float64(top))
	return min(len(densityGlyphs)-1, int(f*float64(len(densityGlyphs))))
}

// MapLegend explains the glyphs.
func MapLegend(st styles.Styles) string {
	return st.Warn.Render("·") + st.Muted.Render(" few  ") + st.Warn.Render("•") + st.Muted.Render(" more  ") +
		st.Alarm.Render("●") + st.Muted.Render(" most")
}
