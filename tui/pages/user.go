package pages

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/components"
)

// userMsg answers one read of everything the user view shows of user id.
type userMsg struct {
	id     int64
	user   api.User
	orders []api.Order
	window *api.RateWindow
	limit  int
	// windowsFull says the rate-limit list came back full, so a user missing from it
	// may have a window that is only quieter than those listed.
	windowsFull bool
	messages    []api.Message
	err         error
}

func (m userMsg) FetchErr() error { return m.err }

const (
	// rateWindowsListed is how many windows GET /admin/ratelimits answers, busiest first.
	rateWindowsListed = 200
	userOrdersShown   = 50
	// userOutboxRead is how many of the outbox's latest messages are searched for the
	// user's: the outbox has no per-chat listing.
	userOutboxRead = 500
)

type inputMode int

const (
	inputNone inputMode = iota
	inputUser
	inputAmount
)

// user shows one user: balance, ledger, orders, message window and the latest
// messages sent to them; a deposit is asked for in the catalogue's major unit and
// confirmed naming the user and the amount as components.Money writes it.
type user struct {
	c      *common.Common
	w, h   int
	id     int64
	data   userMsg
	loaded bool
	// lastLoad and stale throttle re-reads caused by live events to one a second.
	lastLoad time.Time
	stale    bool
	err      error
	input    textinput.Model
	mode     inputMode
}

func NewUser(c *common.Common) *user {
	in := textinput.New()
	in.CharLimit = 24
	in.PromptStyle = c.St.Filter
	return &user{c: c, input: in}
}

func (v *user) Title() string    { return "user" }
func (v *user) ShowsUser()       {}
func (v *user) Modal() bool      { return false }
func (v *user) Filter() string   { return "" }
func (v *user) SetFilter(string) {}
func (v *user) Capturing() bool  { return v.mode != inputNone }
func (v *user) SetSize(w, h int) { v.w, v.h = w, h; v.input.Width = max(10, w/3) }
func (v *user) Keys() []key.Binding {
	if v.mode != inputNone {
		return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "ok")), v.c.Km.Back}
	}
	return []key.Binding{v.c.Km.User, v.c.Km.Deposit}
}

func (v *user) Refresh() tea.Cmd {
	if v.id == 0 {
		return nil
	}
	return v.load(v.id)
}

// load reads the user's balance and ledger, orders, window and messages in one go, so
// the screen never mixes two moments of the same user.
func (v *user) load(id int64) tea.Cmd {
	d, ctx := v.c.D, v.c.Ctx
	v.stale, v.lastLoad = false, v.c.Now()
	return func() tea.Msg {
		m := userMsg{id: id}
		if m.user, m.err = d.User(ctx, id); m.err != nil {
			return m
		}
		if m.orders, m.err = d.UserOrders(ctx, id, userOrdersShown); m.err != nil {
			return m
		}
		rl, err := d.RateLimits(ctx, 1)
		if m.err = err; err != nil {
			return m
		}
		m.limit, m.windowsFull = rl.Limit, len(rl.Windows) >= rateWindowsListed
		if i := slices.IndexFunc(rl.Windows, func(w api.RateWindow) bool { return w.UserID == id }); i >= 0 {
			m.window = &rl.Windows[i]
		}
		ob, err := d.Outbox(ctx, userOutboxRead)
		if m.err = err; err != nil {
			return m
		}
		chats := map[int64]bool{id: true}
		for _, o := range m.orders {
			if t, err := strconv.ParseInt(o.TelegramUserID, 10, 64); err == nil {
				chats[t] = true
			}
		}
		for _, msg := range append(slices.Clone(ob.Queued), ob.Recent...) {
			if chats[msg.ChatID] {
				m.messages = append(m.messages, msg)
			}
		}
		slices.SortStableFunc(m.messages, func(a, b api.Message) int { return b.CreatedAt.Compare(a.CreatedAt) })
		return m
	}
}

func (v *user) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.OpenUserMsg:
		return v.show(msg.ID)
	case common.EventBatchMsg:
		return v.applyEvents(msg)
	case userMsg:
		if msg.id != v.id {
			return nil // a read of a user the operator has since left
		}
		v.err = msg.err
		if msg.err == nil {
			v.data, v.loaded = msg, true
		}
	}
	return nil
}

// applyEvents keeps the shown user live: their message window is patched in place,
// and an event about one of their orders or messages re-reads them, at most once a
// second however many arrive.
func (v *user) applyEvents(evs common.EventBatchMsg) tea.Cmd {
	if v.id == 0 || !v.loaded {
		return nil
	}
	for _, ev := range evs {
		switch {
		case ev.Type == api.EventRateLimit && ev.RateLimit.UserID == v.id:
			e := ev.RateLimit
			if v.data.window == nil {
				v.data.window = &api.RateWindow{UserID: v.id}
			}
			v.data.window.Count, v.data.window.Limited = e.Count, e.Limited
		case ev.Type == api.EventOrder && ev.Order.UserID == v.id,
			ev.Type == api.EventMessage && ev.Message.ChatID == v.id:
			v.stale = true
		}
	}
	if v.stale && v.c.Now().Sub(v.lastLoad) >= time.Second {
		return v.load(v.id)
	}
	return nil
}

func (v *user) show(id int64) tea.Cmd {
	if id != v.id {
		v.id, v.loaded, v.err, v.data = id, false, nil, userMsg{}
	}
	return v.load(id)
}

func (v *user) startInput(mode inputMode, prompt, placeholder string) tea.Cmd {
	v.mode = mode
	v.input.Prompt = prompt
	v.input.Placeholder = placeholder
	v.input.SetValue("")
	return v.input.Focus()
}

func (v *user) HandleKey(msg tea.KeyMsg) tea.Cmd {
	km := v.c.Km
	if v.mode != inputNone {
		switch msg.String() {
		case "esc":
			v.mode = inputNone
			v.input.Blur()
			return nil
		case "enter":
			mode, text := v.mode, strings.TrimSpace(v.input.Value())
			v.mode = inputNone
			v.input.Blur()
			return v.submit(mode, text)
		}
		var cmd tea.Cmd
		v.input, cmd = v.input.Update(msg)
		return cmd
	}
	switch {
	case key.Matches(msg, km.User):
		return v.startInput(inputUser, "user id: ", "a user id")
	case key.Matches(msg, km.Deposit):
		switch {
		case v.id == 0:
			return common.Notice(true, "no user shown: %s opens one", km.User.Help().Key)
		case v.c.Currency == "":
			return common.Notice(true, "the catalogue's currency is not known yet: try again in a moment")
		}
		return v.startInput(inputAmount, fmt.Sprintf("deposit to user %d, in %s: ", v.id, v.c.Currency), "amount")
	}
	return nil
}

func (v *user) submit(mode inputMode, text string) tea.Cmd {
	switch mode {
	case inputUser:
		id, err := strconv.ParseInt(text, 10, 64)
		if err != nil || id <= 0 {
			return common.Notice(true, "%q is not a user id: a positive whole number", text)
		}
		return v.show(id)
	case inputAmount:
		cur := v.c.Currency
		amount, err := components.ParseMoney(text, cur)
		if err == nil && amount <= 0 {
			err = errors.New("the amount must be above zero")
		}
		if err != nil {
			return common.Notice(true, "deposit: %v", err)
		}
		id, d, ctx := v.id, v.c.D, v.c.Ctx
		money := components.Money(amount, cur)
		prompt := fmt.Sprintf("Deposit %s to user %d?", money, id)
		if v.loaded {
			prompt = fmt.Sprintf("Deposit %s to user %d (available %s)?", money, id, components.Money(v.data.user.Balance.Available, cur))
		}
		return common.AskConfirm(prompt, func() tea.Msg {
			b, err := d.Deposit(ctx, id, amount)
			if err != nil {
				return common.ActionDoneMsg{Err: common.WrapAction(err, "deposit %s to user %d", money, id)}
			}
			return common.ActionDoneMsg{Text: fmt.Sprintf("%s deposited to user %d: available %s", money, id, components.Money(b.Available, cur))}
		})
	}
	return nil
}

func (v *user) Render() string {
	st, cur, now := v.c.St, v.c.Currency, v.c.Now()
	var head string
	if v.mode != inputNone {
		head = v.input.View()
	}
	if v.id == 0 {
		if head == "" {
			head = st.Muted.Render(fmt.Sprintf("no user shown: %s on an order, or %s here to type a user id",
				v.c.Km.User.Help().Key, v.c.Km.User.Help().Key))
		}
		return head
	}
	if head == "" {
		head = st.Title.Render(fmt.Sprintf("user %d", v.id))
		if v.loaded {
			b := v.data.user.Balance
			head += st.Label.Render(" · available ") + st.Value.Render(components.Money(b.Available, cur)) +
				st.Label.Render(" · held ") + st.Value.Render(components.Money(b.Held, cur))
		}
	}
	if v.err != nil {
		head += "  " + st.StatusErr.Render(common.DescribeErr(v.err))
	}
	if !v.loaded {
		if v.err != nil {
			return head
		}
		return head + "\n" + v.c.LoadingLine("user")
	}
	window := st.Label.Render("message window ") + st.Muted.Render("none open")
	if v.data.windowsFull {
		window = st.Label.Render("message window ") + st.Muted.Render(fmt.Sprintf("not among the %d busiest", rateWindowsListed))
	}
	if w := v.data.window; w != nil {
		window = st.Label.Render("message window ") + st.Value.Render(fmt.Sprintf("%d/%d", w.Count, v.data.limit)) +
			st.Label.Render(", resets in "+components.HumanDuration(w.ResetAt.Sub(now)))
		if w.Limited {
			window += " " + st.Alarm.Render("LIMITED")
		}
	}

	ledger := v.data.user.Ledger
	ledgerLines := []string{st.Title.Render(fmt.Sprintf("ledger (%d)", len(ledger)))}
	for i := len(ledger) - 1; i >= 0; i-- {
		e := ledger[i]
		line := fmt.Sprintf("%-10s %-8s %14s", components.Ago(now, e.At), e.Kind, ledgerSign(e.Kind)+components.Money(e.Amount, cur))
		if e.OrderID > 0 {
			line += fmt.Sprintf(" #%d", e.OrderID)
		}
		line += st.Muted.Render("  → " + components.Money(e.Available, cur))
		if e.Note != "" {
			line += st.Muted.Render(" " + components.OneLine(e.Note))
		}
		ledgerLines = append(ledgerLines, line)
	}
	if len(ledger) == 0 {
		ledgerLines = append(ledgerLines, st.Muted.Render("no money moved yet"))
	}
	orderLines := []string{st.Title.Render(fmt.Sprintf("orders (%d)", len(v.data.orders)))}
	for _, o := range v.data.orders {
		orderLines = append(orderLines, fmt.Sprintf("#%-5d %s %s %s %s", o.OrderID, statusStyle(st, o.Status).Render(fmt.Sprintf("%-12s", o.Status)),
			o.SpecID, o.Region, st.Muted.Render(components.Ago(now, o.UpdatedAt))))
	}
	if len(v.data.orders) == 0 {
		orderLines = append(orderLines, st.Muted.Render("no orders"))
	}
	msgLines := []string{st.Title.Render(fmt.Sprintf("messages (%d)", len(v.data.messages)))}
	for _, m := range v.data.messages {
		msgLines = append(msgLines, fmt.Sprintf("%-10s %-7s %s", components.Ago(now, m.CreatedAt), m.Status, components.MaskSecrets(components.OneLine(m.Text))))
	}
	if len(v.data.messages) == 0 {
		msgLines = append(msgLines, st.Muted.Render("no recent messages"))
	}

	room := max(3, v.h-3)
	if v.w >= 120 {
		// Side by side: the ledger left, orders over messages right.
		lw := v.w * 55 / 100
		left := cutBlock(ledgerLines, room, lw)
		half := max(2, room/2)
		right := cutBlock(orderLines, half, v.w-lw-3) + "\n\n" + cutBlock(msgLines, room-half-1, v.w-lw-3)
		return head + "\n" + window + "\n\n" + lipgloss.JoinHorizontal(lipgloss.Top, lipgloss.NewStyle().Width(lw+1).Render(left), st.Pane.Render(right))
	}
	// Stacked: each section gets a share of the height, and at least its title and a line.
	n := room - 2
	lr := max(2, n*2/5)
	or := max(2, n*3/10)
	mr := max(2, n-lr-or)
	return head + "\n" + window + "\n\n" + cutBlock(ledgerLines, lr, v.w) + "\n" + cutBlock(orderLines, or, v.w) + "\n" + cutBlock(msgLines, mr, v.w)
}

// cutBlock keeps the first n lines, each cut to w cells, and says how many more there
// are on the last line kept.
func cutBlock(lines []string, n, w int) string {
	if len(lines) > n {
		more := len(lines) - n + 1
		lines = append(lines[:n-1:n-1], fmt.Sprintf("… %d more", more))
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = ansi.Truncate(l, w, "…") // styled lines: cut by cells, escapes kept whole
	}
	return strings.Join(out, "\n")
}

// ledgerSign is how a ledger line of kind moves the user's money: "-" for the kinds
// that take it from the available or held balance (a hold, its capture, a renewal, a
// refund of a top-up, a hold moved to another account), "+" for the rest (a deposit, a
// release, a renewal given back, …).
func ledgerSign(kind string) string {
	switch kind {
	case "hold", "capture", "renewal", "refund", "move_out":
		return "-"
	}
	return "+"
}
