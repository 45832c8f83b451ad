package keymap

import "github.com/charmbracelet/bubbles/key"

type KeyMap struct {
	NextView   key.Binding
	PrevView   key.Binding
	Jump       key.Binding // 1-9 and 0 (the tenth); shown once in help, matched by the root per digit
	Filter     key.Binding
	Help       key.Binding
	Quit       key.Binding
	Refresh    key.Binding
	Up         key.Binding
	Down       key.Binding
	Detail     key.Binding
	Back       key.Binding
	Status     key.Binding
	Sort       key.Binding
	Cancel     key.Binding
	Terminate  key.Binding // deletes a real server: capital, and always confirmed
	NextPage   key.Binding
	PrevPage   key.Binding
	Requeue    key.Binding
	RequeueAll key.Binding
	Purge      key.Binding
	Reset      key.Binding
	User       key.Binding // opens the user view on an order's user, or asks for an id there
	Deposit    key.Binding
	Delete     key.Binding
	MarkRead   key.Binding
	SwitchList key.Binding
	Map        key.Binding
	Level      key.Binding
	Reconcile  key.Binding
	Pause      key.Binding // pauses or resumes provisioning, confirmed
	// NewBroadcast opens the editor for a message to every user; Preview shows it as
	// sent and asks; CancelBroadcast stops the one under the cursor, confirmed.
	NewBroadcast    key.Binding
	Preview         key.Binding
	CancelBroadcast key.Binding
	Yes             key.Binding
	No              key.Binding
}

func DefaultKeyMap() KeyMap {
	return KeyMap{
		NextView:        key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next view")),
		PrevView:        key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous view")),
		Jump:            key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9", "0"), key.WithHelp("1-0", "jump to view")),
		Filter:          key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Help:            key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:            key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Refresh:         key.NewBinding(key.WithKeys("ctrl+r", "g"), key.WithHelp("g", "refresh")),
		Up:              key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:            key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Detail:          key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details")),
		Back:            key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")),
		Status:          key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "status filter")),
		Sort:            key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "sort")),
		Cancel:          key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cancel order")),
		Terminate:       key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "terminate server")),
		NextPage:        key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "older page")),
		PrevPage:        key.NewBinding(key.WithKeys("["), key.WithHelp("[", "newer page")),
		Requeue:         key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "requeue")),
		RequeueAll:      key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "requeue all")),
		Purge:           key.NewBinding(key.WithKeys("P"), key.WithHelp("P", "purge")),
		Reset:           key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "reset window")),
		User:            key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "user")),
		Deposit:         key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "deposit")),
		Delete:          key.NewBinding(key.WithKeys("D"), key.WithHelp("D", "delete")),
		MarkRead:        key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "mark read")),
		SwitchList:      key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "comments/inquiries")),
		Map:             key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "visitor map")),
		Level:           key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "level")),
		Reconcile:       key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "run now")),
		Pause:           key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause/resume")),
		NewBroadcast:    key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "new broadcast")),
		Preview:         key.NewBinding(key.WithKeys("ctrl+s", "ctrl+d"), key.WithHelp("ctrl+s", "preview and send")),
		CancelBroadcast: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cancel broadcast")),
		Yes:             key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "confirm")),
		No:              key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n", "cancel")),
	}
}
