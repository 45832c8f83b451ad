package components

import "strings"

var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws the last width values scaled between zero (or the minimum, if
// negative) and the maximum; a flat series draws as a flat line.
func Sparkline(vals []float64, width int) string {
	if width <= 0 {
		return ""
	}
	if len(vals) > width {
		vals = vals[len(vals)-width:]
	}
	lo, hi := 0.0, 0.0
	for _, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
	}
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", width-len(vals)))
	for _, v := range vals {
		i := 0
		if hi > lo {
			i = int((v - lo) / (hi - lo) * float64(len(sparkBlocks)-1))
		}
		b.WriteRune(sparkBlocks[i])
	}
	return b.String()
}

// Bar is a w-cell gauge of n out of of.
func Bar(n, of, w int) string {
	if of <= 0 || w <= 0 {
		return ""
	}
	full := max(0, min(w, n*w/of))
	return strings.Repeat("█", full) + strings.Repeat("░", w-full)
}
