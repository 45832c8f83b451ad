package tui

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/keymap"
	"github.com/hangarhq/hangar/tui/pages"
	"github.com/hangarhq/hangar/tui/styles"
)

// Options builds a root model. Only Daemon is required.
type Options struct {
	Daemon  Daemon
	Context context.Context // ends the event feed; the SSH server passes the session's
	// Target names the daemon on screen (an address, never a credential).
	Target string
	Styles *styles.Styles
	KeyMap *keymap.KeyMap
	// Now is the clock for relative times; tests fix it so golden files stay stable.
	Now func() time.Time
	// Refresh is how often the REST views are re-read besides the live feed.
	Refresh time.Duration
	// Frame is the shortest interval between two renders caused by events.
	Frame time.Duration
	// Width and Height are the size before the first tea.WindowSizeMsg.
	Width, Height int
	// Role is the console's role when the caller already knows it (the SSH server,
	// from the key); the daemon's GET /admin/whoami has the last word.
	Role string
}

type connState int

const (
	stateLoading connState = iota
	stateReady
)

// Model is the console's root: it owns the event feed, the refresh clock, the banner,
// confirmations, the filter prompt and help, and routes everything else to the views.
type Model struct {
	c      *common.Common
	cancel context.CancelFunc
	target string

	views  []common.View
	active int

	state    connState
	feed     <-chan api.Event
	feedConn *api.ConnState
	feedErr  error // Events itself failed; retried on the refresh clock
	restErr  error
	nextPoll time.Time
	refresh  time.Duration
	frameDur time.Duration
	dropped  int

	filterInput textinput.Model
	filtering   bool
	confirm     *common.ConfirmMsg
	status      string
	statusErr   bool
	notice      bool // status is a noticeMsg: it goes at the next key
	help        help.Model
	spinning    bool

	// roleKnown is set once the daemon has said the console's role.
	roleKnown bool

	dirty bool
	frame string
	quit  bool
}

var _ tea.Model = (*Model)(nil)

// New builds a fresh root model; each program (each SSH session) needs its own.
func New(o Options) *Model {
	ctx := o.Context
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	st := styles.DefaultStyles(nil)
	if o.Styles != nil {
		st = *o.Styles
	}
	km := keymap.DefaultKeyMap()
	if o.KeyMap != nil {
		km = *o.KeyMap
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Refresh <= 0 {
		o.Refresh = 5 * time.Second
	}
	if o.Frame <= 0 {
		o.Frame = 100 * time.Millisecond
	}
	if o.Width <= 0 {
		o.Width = 100
	}
	if o.Height <= 0 {
		o.Height = 30
	}
	sp := spinner.New(spinner.WithSpinner(spinner.Dot), spinner.WithStyle(st.Title))
	c := &common.Common{Ctx: ctx, D: o.Daemon, St: st, Km: km, Now: o.Now, Spin: &sp, Role: o.Role}
	fi := textinput.New()
	fi.Prompt = "/"
	fi.Placeholder = "filter"
	fi.PromptStyle = st.Filter
	fi.CharLimit = 64
	h := help.New()
	h.Styles.ShortKey = st.Title
	h.Styles.FullKey = st.Title
	h.Styles.ShortDesc = st.Muted
	h.Styles.FullDesc = st.Muted
	m := &Model{
		c:           c,
		cancel:      cancel,
		target:      o.Target,
		refresh:     o.Refresh,
		frameDur:    o.Frame,
		filterInput: fi,
		help:        h,
		dirty:       true,
	}
	m.views = []common.View{
		pages.NewOverview(c), pages.NewOrders(c), pages.NewDeadLetters(c), pages.NewRateLimits(c), pages.NewBlog(c), pages.NewOutbox(c),
		pages.NewUser(c), pages.NewModeration(c), pages.NewLogs(c), pages.NewReconcile(c), pages.NewBroadcasts(c), pages.NewAudit(c),
	}
	m.resize(o.Width, o.Height)
	m.render()
	return m
}

func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.startFeed(), m.pollAll(), m.frameTick(), m.startSpinner())
}

func (m *Model) startFeed() tea.Cmd {
	d, ctx := m.c.D, m.c.Ctx
	return func() tea.Msg {
		ch, err := d.Events(ctx)
		return feedStartedMsg{ch: ch, err: err}
	}
}

// waitEvents blocks for one event, then takes whatever else is already queued, so a
// burst of events costs one message and one state update, not one each.
func waitEvents(ch <-chan api.Event) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return eventsMsg{closed: true}
		}
		batch := []api.Event{ev}
		for len(batch) < 1024 {
			select {
			case ev, ok := <-ch:
				if !ok {
					return eventsMsg{events: batch, closed: true}
				}
				batch = append(batch, ev)
			default:
				return eventsMsg{events: batch}
			}
		}
		return eventsMsg{events: batch}
	}
}

func (m *Model) frameTick() tea.Cmd {
	return tea.Tick(m.frameDur, func(time.Time) tea.Msg { return frameMsg{} })
}

func (m *Model) pollTick() tea.Cmd {
	m.nextPoll = m.c.Now().Add(m.refresh)
	return tea.Tick(m.refresh, func(time.Time) tea.Msg { return pollMsg{} })
}

func (m *Model) fetchQueue() tea.Cmd {
	d, ctx := m.c.D, m.c.Ctx
	return func() tea.Msg {
		s, err := d.Queue(ctx)
		return common.QueueMsg{Stats: s, Err: err}
	}
}

// pollAll re-reads the queue and every view. Hidden views are refreshed too so that
// switching is instant; the calls are small and come every few seconds at most.
func (m *Model) pollAll() tea.Cmd {
	cmds := []tea.Cmd{m.fetchQueue()}
	if m.c.Currency == "" {
		cmds = append(cmds, m.fetchPlans())
	}
	if !m.roleKnown {
		cmds = append(cmds, m.fetchWhoami())
	}
	for _, v := range m.views {
		cmds = append(cmds, v.Refresh())
	}
	return tea.Batch(cmds...)
}

// fetchPlans reads the catalogue for its currency; until it answers, amounts show as
// bare integers rather than with a guessed minor unit.
func (m *Model) fetchPlans() tea.Cmd {
	d, ctx := m.c.D, m.c.Ctx
	return func() tea.Msg {
		cat, err := d.Plans(ctx)
		return common.PlansMsg{Cat: cat, Err: err}
	}
}

func (m *Model) startSpinner() tea.Cmd {
	if m.spinning {
		return nil
	}
	m.spinning = true
	return m.c.Spin.Tick
}

func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		m.render()
		return m, nil
	case tea.KeyMsg:
		cmd := m.handleKey(msg)
		m.render()
		return m, cmd
	case frameMsg:
		if m.dirty || m.bannerText() != "" {
			m.render()
		}
		return m, m.frameTick()
	case spinner.TickMsg:
		if !m.loading() {
			m.spinning = false
			return m, nil
		}
		var cmd tea.Cmd
		*m.c.Spin, cmd = m.c.Spin.Update(msg)
		m.dirty = true
		return m, cmd
	case pollMsg:
		cmds = append(cmds, m.pollAll(), m.pollTick())
		if m.feed == nil && m.feedErr != nil {
			m.feedErr = nil
			cmds = append(cmds, m.startFeed())
		}
		return m, tea.Batch(cmds...)
	case feedStartedMsg:
		if msg.err != nil {
			m.feedErr = msg.err
		} else {
			m.feed = msg.ch
			cmds = append(cmds, waitEvents(msg.ch))
		}
		cmds = append(cmds, m.pollTick())
		m.dirty = true
		return m, tea.Batch(cmds...)
	case eventsMsg:
		cmds = append(cmds, m.applyEvents(msg.events)...)
		if msg.closed {
			m.feed = nil
			if m.c.Ctx.Err() == nil {
				m.feedErr = errors.New("event feed closed")
			}
		} else {
			cmds = append(cmds, waitEvents(m.feed))
		}
	case whoamiMsg:
		// The daemon can lower the role it was started with, never raise it: a viewer's
		// SSH key stays a viewer's whatever token its session uses.
		if msg.err == nil && msg.who.Role != "" {
			if !m.c.ReadOnly() {
				m.c.Role = msg.who.Role
			}
			m.roleKnown = true
			m.dirty = true
		}
		return m, nil
	case common.ConfirmMsg:
		if m.c.ReadOnly() {
			// Every action asks first, so refusing here refuses them all, before any
			// request is sent.
			m.status, m.statusErr, m.notice = "✗ read-only: this console is a viewer's, so nothing was sent ("+
				strings.TrimSuffix(msg.Prompt, "?")+")", true, true
			m.render()
			return m, msg.Declined
		}
		m.confirm = &msg
		m.render()
		return m, nil
	case common.ActionDoneMsg:
		m.status, m.statusErr, m.notice = "✓ "+msg.Text, msg.Err != nil, false
		if msg.Err != nil {
			m.status = "✗ " + common.DescribeAction(msg.Err)
		}
		cmds = append(cmds, m.pollAll())
	case common.NoticeMsg:
		m.status, m.statusErr, m.notice = msg.Text, msg.Err, true
	case common.OpenUserMsg:
		for i, v := range m.views {
			if _, ok := v.(interface{ ShowsUser() }); ok {
				m.switchTo(i)
			}
		}
	case common.PlansMsg:
		if msg.Err == nil {
			m.c.Currency = msg.Cat.Currency
		}
	case common.QueueMsg:
		if msg.Err == nil {
			m.state = stateReady
		}
	}
	if f, ok := msg.(common.FetchResult); ok {
		m.noteFetch(f.FetchErr())
	}
	for _, v := range m.views {
		cmds = append(cmds, v.Update(msg))
	}
	if m.loading() {
		cmds = append(cmds, m.startSpinner())
	}
	m.dirty = true
	return m, tea.Batch(cmds...)
}

func (m *Model) applyEvents(evs []api.Event) []tea.Cmd {
	for _, ev := range evs {
		switch ev.Type {
		case api.EventConn:
			m.feedConn = ev.Conn
		case api.EventSnapshot:
			m.state = stateReady
			m.restErr = nil
		case api.EventDropped:
			m.dropped += ev.Dropped
		}
	}
	batch := common.EventBatchMsg(evs)
	var cmds []tea.Cmd
	for _, v := range m.views {
		cmds = append(cmds, v.Update(batch))
	}
	return cmds
}

// noteFetch keeps the banner honest: a transport failure means the daemon is gone, a
// refused token means the console cannot work; anything else is a view's business.
func (m *Model) noteFetch(err error) {
	if err == nil {
		m.restErr = nil
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	var ae *api.Error
	if errors.As(err, &ae) && ae.Status != 401 && ae.Status != 403 && ae.Status != 503 {
		return
	}
	m.restErr = err
}

func (m *Model) loading() bool { return m.state == stateLoading && m.bannerText() == "" }

func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	km := m.c.Km
	if m.confirm != nil {
		switch {
		case key.Matches(msg, km.Yes):
			run, working := m.confirm.Run, m.confirm.Working
			m.confirm = nil
			if working == "" {
				working = "working…"
			}
			m.status, m.statusErr, m.notice = working, false, false
			return run
		case key.Matches(msg, km.No):
			declined := m.confirm.Declined
			m.confirm = nil
			m.status, m.statusErr = "cancelled", false
			return declined
		case msg.String() == "ctrl+c":
			return m.quitCmd()
		}
		return nil
	}
	if m.filtering {
		switch msg.String() {
		case "enter":
			m.filtering = false
			m.filterInput.Blur()
			return nil
		case "esc":
			m.filtering = false
			m.filterInput.Blur()
			m.filterInput.SetValue("")
			m.activeView().SetFilter("")
			return nil
		case "ctrl+c":
			return m.quitCmd()
		}
		var cmd tea.Cmd
		m.filterInput, cmd = m.filterInput.Update(msg)
		m.activeView().SetFilter(m.filterInput.Value())
		return cmd
	}
	if m.notice {
		m.status, m.notice = "", false
	}
	if c, ok := m.activeView().(common.Capturer); ok && c.Capturing() {
		if msg.String() == "ctrl+c" {
			return m.quitCmd()
		}
		return m.activeView().HandleKey(msg)
	}
	switch {
	case key.Matches(msg, km.Quit):
		return m.quitCmd()
	case key.Matches(msg, km.Help):
		m.help.ShowAll = !m.help.ShowAll
		m.resize(m.c.Width, m.c.Height)
		return nil
	case key.Matches(msg, km.NextView):
		m.switchTo((m.active + 1) % len(m.views))
		return nil
	case key.Matches(msg, km.PrevView):
		m.switchTo((m.active + len(m.views) - 1) % len(m.views))
		return nil
	case key.Matches(msg, km.Jump):
		// 1 is the first view and 0 the tenth, as on the keyboard's row.
		m.switchTo((int(msg.String()[0]-'0') + 9) % 10)
		return nil
	case key.Matches(msg, km.Filter):
		m.filtering = true
		m.filterInput.SetValue(m.activeView().Filter())
		m.filterInput.CursorEnd()
		return m.filterInput.Focus()
	case key.Matches(msg, km.Refresh):
		m.status = ""
		if m.feed == nil && m.feedErr != nil {
			m.feedErr = nil
			return tea.Batch(m.pollAll(), m.startFeed())
		}
		return m.pollAll()
	case key.Matches(msg, km.Back) && !m.activeView().Modal() && m.activeView().Filter() != "":
		m.activeView().SetFilter("")
		return nil
	}
	return m.activeView().HandleKey(msg)
}

func (m *Model) quitCmd() tea.Cmd {
	m.quit = true
	m.cancel()
	return tea.Quit
}

func (m *Model) switchTo(i int) {
	if i < 0 || i >= len(m.views) || i == m.active {
		return
	}
	m.active = i
	m.status = ""
	m.resize(m.c.Width, m.c.Height)
}

func (m *Model) activeView() common.View { return m.views[m.active] }

// The largest console drawn, whatever size the terminal claims: a frame costs about
// width × height, and an SSH client may claim 2^32 a side, which made one viewer's
// console build frames of hundreds of megabytes inside the daemon. A larger terminal
// shows the console in its top left corner.
const (
	maxConsoleWidth  = 512
	maxConsoleHeight = 256
)

// resize gives the active view whatever the chrome around it leaves.
func (m *Model) resize(w, h int) {
	w, h = min(max(w, 1), maxConsoleWidth), min(max(h, 1), maxConsoleHeight)
	m.c.Width, m.c.Height = w, h
	m.help.Width = w
	m.filterInput.Width = max(10, w/3)
	chrome := lipgloss.Height(m.header()) + lipgloss.Height(m.footer())
	if b := m.bannerText(); b != "" {
		chrome += lipgloss.Height(m.banner(b))
	}
	for _, v := range m.views {
		v.SetSize(w, max(3, h-chrome))
	}
}

// View returns the last rendered frame: events only mark the model dirty, and the
// frame tick renders at most once per Options.Frame however fast they arrive.
func (m *Model) View() string { return m.frame }

func (m *Model) render() {
	m.dirty = false
	if m.quit {
		// Leave the final screen as it was: it is what the operator last saw.
		return
	}
	b := m.bannerText()
	m.c.Down = b != ""
	m.resize(m.c.Width, m.c.Height)
	var body string
	switch {
	case m.state == stateLoading && b == "":
		body = m.c.Spin.View() + " connecting to the daemon" + targetSuffix(m.target) + "…"
	default:
		body = m.activeView().Render()
	}
	parts := []string{m.header()}
	if b != "" {
		parts = append(parts, m.banner(b))
	}
	bodyH := m.c.Height - lipgloss.Height(strings.Join(parts, "\n")) - lipgloss.Height(m.footer())
	body = lipgloss.NewStyle().MaxHeight(max(1, bodyH)).Render(body)
	if pad := bodyH - lipgloss.Height(body); pad > 0 {
		body += strings.Repeat("\n", pad)
	}
	parts = append(parts, body, m.footer())
	m.frame = lipgloss.NewStyle().MaxWidth(m.c.Width).MaxHeight(m.c.Height).Render(strings.Join(parts, "\n"))
}

func (m *Model) fetchWhoami() tea.Cmd {
	d, ctx := m.c.D, m.c.Ctx
	return func() tea.Msg {
		who, err := d.Whoami(ctx)
		return whoamiMsg{who: who, err: err}
	}
}
