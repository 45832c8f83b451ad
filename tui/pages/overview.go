package pages

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/components"
)

// historyLen is how many snapshots the sparklines remember: three minutes at the
// daemon's one snapshot per second.
const historyLen = 180

type sample struct {
	at         time.Time
	depth      float64
	inFlight   float64
	retryRate  float64
	deadLetter float64
	lag        float64
	throughput float64
}

// overview shows the queue's vital signs, each with a sparkline, and a tail of the
// order lifecycle feed.
type overview struct {
	c       *common.Common
	w, h    int
	stats   *api.QueueStats
	samples []sample
	recent  []api.OrderEvent
	filt    string
}

func NewOverview(c *common.Common) *overview { return &overview{c: c} }

func (v *overview) Title() string       { return "overview" }
func (v *overview) Refresh() tea.Cmd    { return nil } // the root's queue poll feeds it
func (v *overview) SetSize(w, h int)    { v.w, v.h = w, h }
func (v *overview) Filter() string      { return v.filt }
func (v *overview) SetFilter(s string)  { v.filt = s }
func (v *overview) Modal() bool         { return false }
func (v *overview) Keys() []key.Binding { return []key.Binding{v.c.Km.Pause} }

// HandleKey pauses or resumes provisioning. The question says which, and what it
// does to the orders, since the key does the opposite of what it did last time.
func (v *overview) HandleKey(msg tea.KeyMsg) tea.Cmd {
	if !key.Matches(msg, v.c.Km.Pause) {
		return nil
	}
	if v.stats == nil {
		return common.Notice(true, "the queue has not been read yet")
	}
	d, ctx := v.c.D, v.c.Ctx
	if v.stats.Paused {
		return common.AskConfirm(fmt.Sprintf("Resume provisioning? The %d orders waiting start now.", v.stats.Depth), func() tea.Msg {
			p, err := d.ResumeQueue(ctx)
			return pauseSetMsg{p, common.ActionDoneMsg{Text: "provisioning resumed", Err: common.WrapAction(err, "resume provisioning")}}
		})
	}
	return common.AskConfirm("Pause provisioning? Orders are still taken, but none starts and no retry is spent until resumed.", func() tea.Msg {
		p, err := d.PauseQueue(ctx)
		return pauseSetMsg{p, common.ActionDoneMsg{Text: "provisioning paused: orders wait until you resume it (p)", Err: common.WrapAction(err, "pause provisioning")}}
	})
}

// pauseSetMsg is the daemon's answer to a pause or resume. The overview shows it at
// once instead of the last poll's state until the next poll, then passes done on.
type pauseSetMsg struct {
	pause api.QueuePause
	done  common.ActionDoneMsg
}

func (v *overview) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.QueueMsg:
		if msg.Err == nil {
			v.add(msg.Stats)
		}
	case pauseSetMsg:
		if msg.done.Err == nil && v.stats != nil {
			s := *v.stats
			s.Paused, s.PausedSince = msg.pause.Paused, nil
			if s.Paused {
				since := msg.pause.Since
				s.PausedSince = &since
			}
			v.stats = &s
		}
		return func() tea.Msg { return msg.done }
	case common.EventBatchMsg:
		for _, ev := range msg {
			switch ev.Type {
			case api.EventSnapshot:
				v.add(*ev.Snapshot)
			case api.EventOrder:
				v.recent = append(v.recent, *ev.Order)
				if len(v.recent) > 200 {
					v.recent = v.recent[len(v.recent)-200:]
				}
			}
		}
	}
	return nil
}

// add records a snapshot; rates come from the counters' change since the previous
// one, so a poll and an event at the same instant do not spike them.
func (v *overview) add(s api.QueueStats) {
	if v.stats != nil && !s.At.After(v.stats.At) {
		if s.At.Equal(v.stats.At) {
			return
		}
		// Older than what we have (a slow poll): keep the newer picture.
		return
	}
	smp := sample{
		at: s.At, depth: float64(s.Depth), inFlight: float64(s.InFlight),
		deadLetter: float64(s.DeadLetters), lag: s.LagSeconds,
	}
	if p := v.stats; p != nil {
		if dt := s.At.Sub(p.At).Seconds(); dt > 0 {
			smp.retryRate = max(0, float64(s.Retried-p.Retried)/dt)
			smp.throughput = max(0, float64(s.Succeeded+s.DeadLettered-p.Succeeded-p.DeadLettered)/dt)
		}
	}
	v.stats = &s
	v.samples = append(v.samples, smp)
	if len(v.samples) > historyLen {
		v.samples = v.samples[len(v.samples)-historyLen:]
	}
}

func (v *overview) series(f func(sample) float64) []float64 {
	out := make([]float64, len(v.samples))
	for i, s := range v.samples {
		out[i] = f(s)
	}
	return out
}

func (v *overview) Render() string {
	st := v.c.St
	if v.stats == nil {
		return v.c.LoadingLine("queue")
	}
	s := v.stats
	last := v.samples[len(v.samples)-1]
	type card struct {
		label, value, sub string
		alarm             bool
		vals              []float64
	}
	cards := []card{
		{"queue depth", fmt.Sprint(s.Depth), fmt.Sprintf("%d pending · %d retry · alarm >%d", s.Pending, s.WaitingRetry, s.Thresholds.Depth),
			s.Alarms.Depth, v.series(func(x sample) float64 { return x.depth })},
		{"in flight", fmt.Sprintf("%d/%d", s.InFlight, s.MaxConcurrency), fmt.Sprintf("%d started", s.Started),
			false, v.series(func(x sample) float64 { return x.inFlight })},
		{"retries", fmt.Sprintf("%.1f/s", last.retryRate), fmt.Sprintf("%d retried in total", s.Retried),
			false, v.series(func(x sample) float64 { return x.retryRate })},
		{"dead letters", fmt.Sprint(s.DeadLetters), fmt.Sprintf("%d dead-lettered · alarm >%d", s.DeadLettered, s.Thresholds.DeadLetters),
			s.Alarms.DeadLetters, v.series(func(x sample) float64 { return x.deadLetter })},
		{"consumer lag", components.HumanDuration(time.Duration(s.LagSeconds * float64(time.Second))), fmt.Sprintf("alarm >%s", components.HumanDuration(time.Duration(s.Thresholds.LagSeconds*float64(time.Second)))),
			s.Alarms.Lag, v.series(func(x sample) float64 { return x.lag })},
		{"throughput", fmt.Sprintf("%.1f/s", last.throughput), fmt.Sprintf("%d done · %d enqueued", s.Succeeded, s.Enqueued),
			false, v.series(func(x sample) float64 { return x.throughput })},
	}
	perRow := 3
	switch {
	case v.w < 60:
		perRow = 1
	case v.w < 96:
		perRow = 2
	}
	cardW := v.w/perRow - 2  // border
	inner := max(8, cardW-2) // padding
	var rows []string
	var row []string
	for i, cd := range cards {
		box, val := st.Box, st.Value
		if cd.alarm {
			box, val = st.AlarmBox, st.Alarm
		}
		label := st.Label.Render(cd.label)
		if cd.alarm {
			label += " " + st.Alarm.Render("ALARM")
		}
		body := strings.Join([]string{
			label,
			val.Render(cd.value),
			st.Sparkline.Render(components.Sparkline(cd.vals, inner)),
			st.Muted.Render(components.Truncate(cd.sub, inner)),
		}, "\n")
		row = append(row, box.Width(cardW).Render(body))
		if len(row) == perRow || i == len(cards)-1 {
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
			row = nil
		}
	}
	out := strings.Join(rows, "\n")
	if w := s.Telegram; w != nil && s.Alarms.Telegram {
		out = st.Alarm.Render(components.Truncate(fmt.Sprintf("TELEGRAM ALARM: delivery failed %s ago: %s (%d updates waiting)",
			components.HumanDuration(s.At.Sub(w.LastErrorAt)), w.LastError, w.PendingUpdates), v.w)) + "\n" + out
	}
	if s.Disk != nil && s.Alarms.Disk {
		// Above the cards: every write is refused until an operator frees space.
		out = st.Alarm.Render(components.Truncate("DISK ALARM: writes refused — "+s.Disk.Refusing, v.w)) + "\n" + out
	}
	if s.Paused && s.PausedSince != nil {
		since := *s.PausedSince
		out = st.Warn.Render(components.Truncate(fmt.Sprintf("PAUSED since %s (%s ago): orders are taken and wait; p resumes",
			since.UTC().Format("15:04 UTC"), components.HumanDuration(v.c.Now().Sub(since))), v.w)) + "\n" + out
	}
	line := fmt.Sprintf("snapshot %s · sparklines cover the last %s", s.At.UTC().Format("15:04:05"), components.HumanDuration(time.Duration(len(v.samples))*time.Second))
	if s.Disk != nil && s.Disk.FreeBytes >= 0 {
		line += fmt.Sprintf(" · disk %s free, floor %s", humanBytes(s.Disk.FreeBytes), humanBytes(s.Disk.FloorBytes))
	}
	if w := s.Telegram; w != nil {
		line += fmt.Sprintf(" · telegram: %d waiting", w.PendingUpdates)
		if w.CheckError != "" {
			line += ", not checked: " + w.CheckError
		}
	}
	out += "\n" + st.Muted.Render(components.Truncate(line, v.w))
	room := v.h - lipgloss.Height(out) - 2
	if room > 0 {
		out += "\n\n" + st.Title.Render("recent order events") + "\n" + v.feed(room-1)
	}
	return out
}

func (v *overview) feed(n int) string {
	st := v.c.St
	var lines []string
	for i := len(v.recent) - 1; i >= 0 && len(lines) < n; i-- {
		e := v.recent[i]
		line := fmt.Sprintf("%s #%-6d %-15s %-12s attempt %d", e.At.UTC().Format("15:04:05"), e.OrderID, e.Event, e.Status, e.Attempt)
		if e.Error != "" {
			line += "  " + components.OneLine(e.Error)
		}
		if !components.ContainsFold(line, v.filt) {
			continue
		}
		lines = append(lines, statusStyle(st, e.Status).Render(components.Truncate(line, v.w)))
	}
	if len(lines) == 0 {
		return st.Muted.Render("waiting for orders…")
	}
	return strings.Join(lines, "\n")
}

// humanBytes writes n in the largest binary unit that keeps it at least 1.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
