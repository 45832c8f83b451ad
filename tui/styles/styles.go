package styles

import "github.com/charmbracelet/lipgloss"

// Styles is the console's palette; components take what they need from it rather than
// building lipgloss styles of their own.
type Styles struct {
	App       lipgloss.Style
	Title     lipgloss.Style
	Tab       lipgloss.Style
	ActiveTab lipgloss.Style
	Banner    lipgloss.Style
	Status    lipgloss.Style
	StatusErr lipgloss.Style
	Confirm   lipgloss.Style
	Filter    lipgloss.Style
	Label     lipgloss.Style
	Value     lipgloss.Style
	OK        lipgloss.Style
	Warn      lipgloss.Style
	Alarm     lipgloss.Style
	Muted     lipgloss.Style
	Box       lipgloss.Style
	AlarmBox  lipgloss.Style
	Pane      lipgloss.Style
	TableHead lipgloss.Style
	TableCell lipgloss.Style
	TableSel  lipgloss.Style
	Sparkline lipgloss.Style
}

// DefaultStyles builds the palette on r; pass lipgloss.DefaultRenderer() locally and
// the session's renderer over SSH.
func DefaultStyles(r *lipgloss.Renderer) Styles {
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	accent := lipgloss.AdaptiveColor{Light: "#5A56E0", Dark: "#7D79F6"}
	red := lipgloss.AdaptiveColor{Light: "#C4002B", Dark: "#FF5F87"}
	amber := lipgloss.AdaptiveColor{Light: "#B36B00", Dark: "#FFB454"}
	green := lipgloss.AdaptiveColor{Light: "#008A3E", Dark: "#5AF78E"}
	muted := lipgloss.AdaptiveColor{Light: "#8A8A8A", Dark: "#6C6C6C"}
	return Styles{
		App:       r.NewStyle().Padding(0, 1),
		Title:     r.NewStyle().Bold(true).Foreground(accent),
		Tab:       r.NewStyle().Padding(0, 1).Foreground(muted),
		ActiveTab: r.NewStyle().Padding(0, 1).Bold(true).Underline(true).Foreground(accent),
		Banner:    r.NewStyle().Bold(true).Foreground(lipgloss.Color("#FFFFFF")).Background(red).Padding(0, 1),
		Status:    r.NewStyle().Foreground(green),
		StatusErr: r.NewStyle().Foreground(red),
		Confirm:   r.NewStyle().Bold(true).Foreground(amber),
		Filter:    r.NewStyle().Foreground(accent),
		Label:     r.NewStyle().Foreground(muted),
		Value:     r.NewStyle().Bold(true),
		OK:        r.NewStyle().Foreground(green),
		Warn:      r.NewStyle().Foreground(amber),
		Alarm:     r.NewStyle().Bold(true).Foreground(red),
		Muted:     r.NewStyle().Foreground(muted),
		Box:       r.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(muted).Padding(0, 1),
		AlarmBox:  r.NewStyle().Border(lipgloss.ThickBorder()).BorderForeground(red).Padding(0, 1),
		Pane:      r.NewStyle().Border(lipgloss.NormalBorder(), false, false, false, true).BorderForeground(muted).PaddingLeft(1),
		TableHead: r.NewStyle().Padding(0, 1).Bold(true).Foreground(accent).BorderStyle(lipgloss.NormalBorder()).BorderBottom(true).BorderForeground(muted),
		TableCell: r.NewStyle().Padding(0, 1),
		TableSel:  r.NewStyle().Bold(true).Reverse(true),
		Sparkline: r.NewStyle().Foreground(accent),
	}
}
