package store

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// OutlogCap bounds the log of sent messages kept for the console.
const OutlogCap = 1000

// Outbox message states.
const (
	MessageQueued  = "queued"
	MessageSent    = "sent"
	MessageLogged  = "logged" // sending is off: the message went to the log only
	MessageDropped = "dropped"
)

// OutboxMessage is a Telegram message waiting to be sent, or (in the outlog) one that was.
type OutboxMessage struct {
	ID          uint64          `json:"id"`
	ChatID      int64           `json:"chat_id"`
	Text        string          `json:"text"`
	ParseMode   string          `json:"parse_mode,omitempty"`
	ReplyMarkup json.RawMessage `json:"reply_markup,omitempty"`
	Status      string          `json:"status"`
	Attempts    int             `json:"attempts"`
	LastError   string          `json:"last_error,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
	NextAt      time.Time       `json:"next_at"`
	SentAt      time.Time       `json:"sent_at,omitzero"`
	// CallbackQueryID makes this an answer to a button press (answerCallbackQuery)
	// rather than a chat message; Text is the short notice the user sees.
	CallbackQueryID string `json:"callback_query_id,omitempty"`
	// SecretOrderID asks the sender to put that order's root password in place of
	// RootPasswordPlaceholder at send time: the password itself is never stored.
	SecretOrderID int64 `json:"secret_order_id,omitempty"`
	// LogText, when set, is what logs and the outlog keep instead of Text (a message
	// that carries a secret and cannot be stored whole).
	LogText string `json:"-"`
	// Invoice makes this a sendInvoice (a /topup in Telegram Stars) rather than a
	// text message; Text is its description, for the log and the console.
	Invoice *InvoiceRequest `json:"invoice,omitempty"`
}

// RootPasswordPlaceholder stands for a root password in a stored message.
const RootPasswordPlaceholder = "{{root_password}}"

// PasswordMask replaces secrets wherever a message is shown or kept.
const PasswordMask = "••••••••"

// Loggable is the text that may be logged, stored or shown: secrets masked.
func (m OutboxMessage) Loggable() string {
	if m.LogText != "" {
		return m.LogText
	}
	return strings.ReplaceAll(m.Text, RootPasswordPlaceholder, PasswordMask)
}

// outboxDueKey orders the outbox by due time, then by id, so that the sender reads only
// what is due without scanning the backlog.
func outboxDueKey(m *OutboxMessage) []byte {
	k := make([]byte, len(prefixOutbox)+16)
	copy(k, prefixOutbox)
	binary.BigEndian.PutUint64(k[len(prefixOutbox):], uint64(m.NextAt.UnixNano()))
	binary.BigEndian.PutUint64(k[len(prefixOutbox)+8:], m.ID)
	return k
}

func (s *Store) assignIDs(msgs []OutboxMessage, now time.Time) ([]OutboxMessage, error) {
	out := make([]OutboxMessage, len(msgs))
	for i, m := range msgs {
		id, err := s.nextSeq("outbox")
		if err != nil {
			return nil, err
		}
		m.ID = id
		m.Status = MessageQueued
		m.CreatedAt = now
		if m.NextAt.IsZero() {
			m.NextAt = now
		}
		out[i] = m
	}
	return out, nil
}

func putOutbox(txn *tx, m *OutboxMessage) error {
	return putRecord(txn, outboxDueKey(m), m, 0)
}

// putNewOutbox queues a message that assignIDs has just numbered: its key holds an id
// never handed out before.
func putNewOutbox(txn *tx, m *OutboxMessage) error {
	key := outboxDueKey(m)
	if err := putRecord(txn, key, m, 0); err != nil {
		return err
	}
	txn.MarkBorn(key)
	return nil
}

func putOutboxAll(txn *tx, msgs []OutboxMessage) error {
	for i := range msgs {
		if err := putNewOutbox(txn, &msgs[i]); err != nil {
			return err
		}
	}
	return nil
}

// DueMessages returns up to limit queued messages due at or before now, oldest first.
func (s *Store) DueMessages(now time.Time, limit int) ([]OutboxMessage, error) {
	var out []OutboxMessage
	err := s.view(func(txn *tx) error {
		return scanPrefix(txn, prefixOutbox, false, func(key, val []byte) (bool, error) {
			var m OutboxMessage
			if err := decodeRecord(val, &m); err != nil {
				return true, nil
			}
			if m.NextAt.After(now) {
				return false, nil
			}
			out = append(out, m)
			return len(out) < limit, nil
		})
	})
	return out, err
}

// QueuedMessages returns up to limit queued messages, due or not, oldest due first.
func (s *Store) QueuedMessages(limit int) ([]OutboxMessage, error) {
	return s.DueMessages(time.Unix(1<<40, 0), limit)
}

// RescheduleMessage moves a queued message to a new due time with its attempt recorded.
func (s *Store) RescheduleMessage(old OutboxMessage, nextAt time.Time, lastErr string) error {
	return s.reschedule(old, nextAt, lastErr, 1)
}

// DeferMessage moves a message to nextAt without counting an attempt: Telegram
// answered 429, which is about the rate, not the message.
func (s *Store) DeferMessage(old OutboxMessage, nextAt time.Time, lastErr string) error {
	return s.reschedule(old, nextAt, lastErr, 0)
}

func (s *Store) reschedule(old OutboxMessage, nextAt time.Time, lastErr string, attempts int) error {
	return s.update(func(txn *tx) error {
		if err := txn.Delete(outboxDueKey(&old)); err != nil {
			return err
		}
		m := old
		m.Attempts += attempts
		m.NextAt = nextAt
		m.LastError = lastErr
		return putOutbox(txn, &m)
	})
}

// LogTransientMessage records in the outlog a message that never went through the
// outbox (one that must not be stored whole, such as a root password notice).
func (s *Store) LogTransientMessage(m OutboxMessage, status, lastErr string) error {
	id, err := s.nextSeq("outbox")
	if err != nil {
		return err
	}
	m.ID = id
	if m.CreatedAt.IsZero() {
		m.CreatedAt = s.now()
	}
	now := s.now()
	return s.update(func(txn *tx) error { return s.appendOutlog(txn, m, status, lastErr, now) })
}

func (s *Store) appendOutlog(txn *tx, m OutboxMessage, status, lastErr string, now time.Time) error {
	m.Text = m.Loggable()
	m.LogText = ""
	m.Status = status
	m.LastError = lastErr
	m.Attempts++
	m.SentAt = now
	// The log is a ring of OutlogCap slots: an append overwrites the entry it
	// replaces, so the log never grows and nothing needs trimming or scanning.
	return putListed(txn, outlogKey(m.ID%OutlogCap), &m)
}

// RecentMessages returns up to limit outlog entries, newest first.
func (s *Store) RecentMessages(limit int) ([]OutboxMessage, error) {
	var out []OutboxMessage
	err := s.view(func(txn *tx) error {
		return scanPrefix(txn, prefixOutlog, false, func(_, val []byte) (bool, error) {
			var m OutboxMessage
			if err := decodeRecord(val, &m); err == nil {
				out = append(out, m)
			}
			return true, nil
		})
	})
	slices.SortFunc(out, func(a, b OutboxMessage) int { return cmp.Compare(b.ID, a.ID) })
	return out[:min(limit, len(out))], err
}

// Finished is one message's final outcome, for FinishMessages.
type Finished struct {
	Message OutboxMessage
	Status  string
	Error   string
}

// FinishMessages records many outcomes in one commit (the sender's batch).
func (s *Store) FinishMessages(done []Finished) error {
	if len(done) == 0 {
		return nil
	}
	now := s.now()
	return s.update(func(txn *tx) error {
		for _, f := range done {
			if err := txn.Delete(outboxDueKey(&f.Message)); err != nil {
				return err
			}
			if err := s.appendOutlog(txn, f.Message, f.Status, f.Error, now); err != nil {
				return err
			}
			// In the same commit: a crash between the two left a sent password whose
			// window never started, kept (and revealable) as long as its order lived.
			if f.Message.SecretOrderID != 0 {
				if err := markSealedPasswordDone(txn, f.Message.SecretOrderID, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
