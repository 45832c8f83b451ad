package tui

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/hangarhq/hangar/http/api"
)

type (
	feedStartedMsg struct {
		ch  <-chan api.Event
		err error
	}
	eventsMsg struct {
		events []api.Event
		closed bool
	}
	// plansMsg answers the catalogue read; only its currency is kept.
	plansMsg struct {
		cat api.Catalog
		err error
	}
	frameMsg struct{}
	pollMsg  struct{}
	queueMsg struct {
		stats api.QueueStats
		err   error
	}
	// confirmMsg asks the operator y/n before run; views send it for every action.
	// working is the status line while run is in flight ("working…" when empty).
	confirmMsg struct {
		prompt  string
		working string
		run     tea.Cmd
	}
	// actionDoneMsg reports an action's outcome on the status line and makes every
	// view re-read the daemon. orderID names the order acted on, if one; order, when
	// set, is that order as the daemon answered, so views can show it before the
	// re-read comes back.
	actionDoneMsg struct {
		text    string
		err     error
		orderID int64
		order   *api.Order
	}
	// noticeMsg puts a line on the status bar without asking the daemon anything: why
	// a key did nothing, for instance.
	noticeMsg struct {
		text string
		err  bool
	}
)

// fetchResult is implemented by every view's load message so the root can tell a
// daemon that went away from one that answered.
type fetchResult interface{ fetchErr() error }

func (q queueMsg) fetchErr() error { return q.err }

func askConfirm(prompt string, run tea.Cmd) tea.Cmd {
	return func() tea.Msg { return confirmMsg{prompt: prompt, run: run} }
}

func notice(err bool, format string, args ...any) tea.Cmd {
	return func() tea.Msg { return noticeMsg{text: fmt.Sprintf(format, args...), err: err} }
}

// actionError names the action that failed, so the status line says what went wrong
// and not only the daemon's sentence.
type actionError struct {
	what string
	err  error
}

func (e *actionError) Error() string { return e.what + ": " + e.err.Error() }
func (e *actionError) Unwrap() error { return e.err }

func wrapAction(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return &actionError{what: fmt.Sprintf(format, args...), err: err}
}

// requestPrefix is how the client names the request in a transport error; after an
// action's name it only repeats it.
var requestPrefix = regexp.MustCompile(`^[A-Z]+ /\S*: `)

// describeAction is describeErr with the failed action's name in front.
func describeAction(err error) string {
	var ae *actionError
	if errors.As(err, &ae) {
		return ae.what + ": " + requestPrefix.ReplaceAllString(describeErr(ae.err), "")
	}
	return describeErr(err)
}

// eventBatchMsg is how views receive live events: already coalesced by the root.
type eventBatchMsg []api.Event

// describeErr turns an error into one short line: the daemon's own sentence when it
// answered, the transport's otherwise.
func describeErr(err error) string {
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
