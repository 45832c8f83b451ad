package common

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/hangarhq/hangar/http/api"
)

type (
	// QueueMsg answers the root's queue poll; the overview draws it.
	QueueMsg struct {
		Stats api.QueueStats
		Err   error
	}
	// PlansMsg answers the catalogue read; only its currency is kept.
	PlansMsg struct {
		Cat api.Catalog
		Err error
	}
	// ConfirmMsg asks the operator y/n before Run; pages send it for every action.
	// Working is the status line while Run is in flight ("working…" when empty).
	// Declined, when set, runs when the question is answered no or refused (a viewer's
	// console), so a page that showed what it asks about can step back.
	ConfirmMsg struct {
		Prompt   string
		Working  string
		Run      tea.Cmd
		Declined tea.Cmd
	}
	// ActionDoneMsg reports an action's outcome on the status line and makes every
	// page re-read the daemon. OrderID names the order acted on, if one; Order, when
	// set, is that order as the daemon answered, so pages can show it before the
	// re-read comes back.
	ActionDoneMsg struct {
		Text    string
		Err     error
		OrderID int64
		Order   *api.Order
	}
	// NoticeMsg puts a line on the status bar without asking the daemon anything: why
	// a key did nothing, for instance.
	NoticeMsg struct {
		Text string
		Err  bool
	}
	// OpenUserMsg asks the root to show the user view on user ID, as u on an order does.
	OpenUserMsg struct{ ID int64 }
	// EventBatchMsg is how pages receive live events: already coalesced by the root.
	EventBatchMsg []api.Event
)

// FetchResult is implemented by every page's load message so the root can tell a
// daemon that went away from one that answered.
type FetchResult interface{ FetchErr() error }

func (q QueueMsg) FetchErr() error { return q.Err }

// OpenUser shows the user view on user id.
func OpenUser(id int64) tea.Cmd { return func() tea.Msg { return OpenUserMsg{ID: id} } }

// AskConfirm asks prompt before run.
func AskConfirm(prompt string, run tea.Cmd) tea.Cmd {
	return func() tea.Msg { return ConfirmMsg{Prompt: prompt, Run: run} }
}

// Notice puts a line on the status bar.
func Notice(err bool, format string, args ...any) tea.Cmd {
	return func() tea.Msg { return NoticeMsg{Text: fmt.Sprintf(format, args...), Err: err} }
}

// actionError names the action that failed, so the status line says what went wrong
// and not only the daemon's sentence.
type actionError struct {
	what string
	err  error
}

func (e *actionError) Error() string { return e.what + ": " + e.err.Error() }
func (e *actionError) Unwrap() error { return e.err }

// WrapAction names the action err failed; nil stays nil.
func WrapAction(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return &actionError{what: fmt.Sprintf(format, args...), err: err}
}

// requestPrefix is how the client names the request in a transport error; after an
// action's name it only repeats it.
var requestPrefix = regexp.MustCompile(`^[A-Z]+ /\S*: `)

// DescribeAction is DescribeErr with the failed action's name in front.
func DescribeAction(err error) string {
	var ae *actionError
	if errors.As(err, &ae) {
		return ae.what + ": " + requestPrefix.ReplaceAllString(DescribeErr(ae.err), "")
	}
	return DescribeErr(err)
}

// DescribeErr turns an error into one short line: the daemon's own sentence when it
// answered, the transport's otherwise.
func DescribeErr(err error) string {
	var ae *api.Error
	if errors.As(err, &ae) {
		if ae.Message != "" {
			return fmt.Sprintf("%s (%d)", ae.Message, ae.Status)
		}
		return fmt.Sprintf("%s (%d)", ae.Code, ae.Status)
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": dial tcp"); i >= 0 {
		s = s[i+2:]
	}
	return s
}
