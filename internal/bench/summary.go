package main

import (
	"fmt"
	"slices"
	"time"
)

// The summary closes a run with the figures issue 18 judges hangar on, gathered from
// the scenarios that ran: the ratios against the anchors, and hangar's CPU per order
// against the prescribed floor's.

// summaryRow is one ratio of the anchors comparison.
type summaryRow struct {
	name       string
	ratios     []float64
	target     float64 // 0: none
	p99h, p99a time.Duration
}

var summaryRows []summaryRow

// summaryNotes are lines a scenario wants repeated in the summary (why it ran short).
var summaryNotes []string

// summaryCPU holds CPU per order (load generator and server together, from the first
// POST to the last order done) of each run of the prescribed floor and of hangar's
// orders scenario.
var summaryCPU struct{ floor, hangar []time.Duration }

// summaryTargetCPU is issue 18's goal: hangar's CPU per order at most twice the
// prescribed floor's.
const summaryTargetCPU = 2.0

func summaryAdd(name string, ratios []float64, target float64, p99h, p99a time.Duration) {
	summaryRows = append(summaryRows, summaryRow{name, ratios, target, p99h, p99a})
}

func printSummary() {
	if len(summaryRows) == 0 && len(summaryNotes) == 0 && (len(summaryCPU.floor) == 0 || len(summaryCPU.hangar) == 0) {
		return
	}
	fmt.Printf("\n== summary (issue 18) ==\n")
	for _, n := range summaryNotes {
		fmt.Printf("  %s\n", n)
	}
	for _, r := range summaryRows {
		goal, verdict := "", ""
		if r.target > 0 {
			med := median(r.ratios)
			ok := med >= r.target && (r.p99a == 0 || r.p99h <= r.p99a)
			goal = fmt.Sprintf("goal >= %.1f×", r.target)
			if r.p99a > 0 {
				goal += ", p99 no worse"
			}
			verdict = map[bool]string{true: "ok", false: "MISS"}[ok]
		}
		p99 := ""
		if r.p99a > 0 {
			p99 = fmt.Sprintf("p99 %s vs %s", fmtDur(r.p99h), fmtDur(r.p99a))
		}
		fmt.Printf("  %-44s %-22s %-24s %-28s %s\n", r.name, fmtRatios(r.ratios), p99, goal, verdict)
	}
	if len(summaryCPU.floor) > 0 && len(summaryCPU.hangar) > 0 {
		h, f := medianD(summaryCPU.hangar), medianD(summaryCPU.floor)
		ratio := float64(h) / float64(f)
		verdict := map[bool]string{true: "ok", false: "MISS"}[ratio <= summaryTargetCPU]
		fmt.Printf("  %-44s %5.2f×  hangar %s [%s–%s] ÷ prescribed floor %s [%s–%s]   goal <= %.1f× %s\n",
			"cpu per order vs the prescribed floor", ratio,
			fmtDur(h), fmtDur(slices.Min(summaryCPU.hangar)), fmtDur(slices.Max(summaryCPU.hangar)),
			fmtDur(f), fmtDur(slices.Min(summaryCPU.floor)), fmtDur(slices.Max(summaryCPU.floor)),
			summaryTargetCPU, verdict)
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianD(v []time.Duration) time.Duration {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
