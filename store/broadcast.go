package store

import (
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Broadcast states.
const (
	BroadcastQueued    = "queued"    // waiting behind an older broadcast
	BroadcastSending   = "sending"   // the broadcaster is working through it
	BroadcastDone      = "done"      // every recipient was tried
	BroadcastCancelled = "cancelled" // stopped by the admin; the rest were not sent
)

// BroadcastCap bounds the broadcasts kept: creating one past it deletes the oldest
// finished ones, so the list cannot grow without bound.
const BroadcastCap = 100

// recipientChunk is how many user ids one bcastrcpt record holds: a 1,000,000-user
// snapshot is 2,000 records of 4 KiB rather than a million keys.
const recipientChunk = 512

var (
	// ErrBroadcastFinished refuses to cancel a broadcast that is already done or cancelled.
	ErrBroadcastFinished = errors.New("store: broadcast already finished")
	// ErrNoRecipients refuses a broadcast when nobody has talked to the bot yet.
	ErrNoRecipients = errors.New("store: no users to broadcast to")
)

// Broadcast is a message to every Telegram user the bot had seen when it was created
// (its recipients, snapshotted then), sent by the engine's broadcaster.
type Broadcast struct {
	ID        int64     `json:"id"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
	// By names who asked for it; the audit log fills it in.
	By    string `json:"by,omitempty"`
	State string `json:"state"`
	// Total recipients; Sent, Failed and Blocked (403: the user blocked the bot or is
	// deactivated) count the settled ones, as of the last progress commit.
	Total   int `json:"total"`
	Sent    int `json:"sent"`
	Failed  int `json:"failed"`
	Blocked int `json:"blocked"`
	// Next is the index of the first recipient not yet settled: where a restart resumes.
	Next       int       `json:"next"`
	UpdatedAt  time.Time `json:"updated_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	LastError  string    `json:"last_error,omitempty"`
}

// Active reports whether the broadcaster still has work in b.
func (b Broadcast) Active() bool { return b.State == BroadcastQueued || b.State == BroadcastSending }

// BroadcastProgress is what the broadcaster settled since its last commit.
type BroadcastProgress struct {
	ID   int64
	Next int // the new resume point
	// Deltas since the last commit.
	Sent, Failed, Blocked int
	// BlockedUsers answered 403: they are marked and left out of later broadcasts.
	BlockedUsers []int64
	LastError    string
}

func telegramUserKey(user int64) []byte { return u64Key(prefixTelegramUser, uint64(user)) }
func broadcastKey(id int64) []byte      { return u64Key(prefixBroadcast, uint64(id)) }

func broadcastRcptPrefix(id int64) string { return string(u64Key(prefixBroadcastRcpt, uint64(id))) }

func broadcastRcptKey(id int64, chunk int) []byte {
	return u64Key(broadcastRcptPrefix(id), uint64(chunk))
}

// markUserSeen records that user talked to the bot (the recipients of broadcasts). A
// user who writes again after blocking the bot has unblocked it. A user already known
// and not blocked costs one read and no write: this runs for every update.
func (s *Store) markUserSeen(txn *tx, user int64, now time.Time) error {
	if user <= 0 {
		return nil
	}
	key := telegramUserKey(user)
	first := now
	if !s.known.mayBeKnown(user) {
		s.known.add(user)
		return txn.Set(key, telegramUserValue(first, time.Time{}))
	}
	item, err := txn.Get(key)
	switch {
	case err == nil:
		var blocked bool
		if err := item.Value(func(v []byte) error {
			if len(v) >= 16 {
				first = time.Unix(0, int64(binary.BigEndian.Uint64(v)))
				blocked = binary.BigEndian.Uint64(v[8:]) != 0
			}
			return nil
		}); err != nil {
			return err
		}
		if !blocked {
			return nil
		}
	case !errors.Is(err, badger.ErrKeyNotFound):
		return err
	}
	return txn.Set(key, telegramUserValue(first, time.Time{}))
}

func telegramUserValue(first, blocked time.Time) []byte {
	v := make([]byte, 16)
	binary.BigEndian.PutUint64(v, uint64(first.UnixNano()))
	if !blocked.IsZero() {
		binary.BigEndian.PutUint64(v[8:], uint64(blocked.UnixNano()))
	}
	return v
}

// MarkUsersSeen records users as people the bot has talked to, in one commit
// (CompleteUpdate does it for every update; tests and imports call this).
func (s *Store) MarkUsersSeen(users ...int64) error {
	now := s.now()
	return s.update(func(txn *tx) error {
		for _, u := range users {
			if err := s.markUserSeen(txn, u, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// UserBlocked reports whether user's last broadcast answered 403 (and they have not
// written to the bot since).
func (s *Store) UserBlocked(user int64) (bool, error) {
	var blocked bool
	err := s.view(func(txn *tx) error {
		item, err := txn.Get(telegramUserKey(user))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			blocked = len(v) >= 16 && binary.BigEndian.Uint64(v[8:]) != 0
			return nil
		})
	})
	return blocked, err
}

// recipients lists, in id order, every Telegram user the bot has seen and who has not
// blocked it: the users-seen index, plus owners of orders placed before the index
// existed (their order index knows them).
func recipients(txn *tx) ([]int64, error) {
	seen := map[int64]bool{} // user → blocked
	err := scanPrefix(txn, prefixTelegramUser, false, func(key, val []byte) (bool, error) {
		user := int64(u64FromKey(prefixTelegramUser, key))
		seen[user] = len(val) >= 16 && binary.BigEndian.Uint64(val[8:]) != 0
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	opts := badger.DefaultIteratorOptions
	opts.PrefetchValues = false
	opts.Prefix = []byte(prefixOrderUser)
	it := txn.NewIterator(opts)
	for it.Rewind(); it.Valid(); it.Next() {
		k := it.Item().Key()[len(prefixOrderUser):]
		if len(k) < 10 { // {user}:{id:8}
			continue
		}
		user, err := strconv.ParseInt(string(k[:len(k)-9]), 10, 64)
		if err != nil || user <= 0 {
			continue
		}
		if _, ok := seen[user]; !ok {
			seen[user] = false
		}
	}
	it.Close()
	out := make([]int64, 0, len(seen))
	for user, blocked := range seen {
		if !blocked {
			out = append(out, user)
		}
	}
	slices.Sort(out)
	return out, nil
}

// CreateBroadcast stores a broadcast of text with a snapshot of its recipients, in one
// commit: a crash leaves either all of it or nothing.
func (s *Store) CreateBroadcast(text, by string) (Broadcast, error) {
	id, err := s.nextSeq("broadcast")
	if err != nil {
		return Broadcast{}, err
	}
	now := s.now()
	b := Broadcast{ID: int64(id), Text: text, By: by, CreatedAt: now, UpdatedAt: now, State: BroadcastQueued}
	err = s.updateNow(func(txn *tx) error {
		users, err := recipients(txn)
		if err != nil {
			return err
		}
		if len(users) == 0 {
			return ErrNoRecipients
		}
		b.Total = len(users)
		for chunk := 0; chunk*recipientChunk < len(users); chunk++ {
			part := users[chunk*recipientChunk : min(len(users), (chunk+1)*recipientChunk)]
			v := make([]byte, 0, 8*len(part))
			for _, u := range part {
				v = binary.BigEndian.AppendUint64(v, uint64(u))
			}
			if err := txn.Set(broadcastRcptKey(b.ID, chunk), v); err != nil {
				return err
			}
		}
		if err := putRecord(txn, broadcastKey(b.ID), &b, 0); err != nil {
			return err
		}
		return trimBroadcasts(txn)
	})
	if err != nil {
		return Broadcast{}, err
	}
	return b, nil
}

// trimBroadcasts deletes the oldest finished broadcasts beyond BroadcastCap.
func trimBroadcasts(txn *tx) error {
	var all []Broadcast
	err := scanPrefix(txn, prefixBroadcast, false, func(_, val []byte) (bool, error) {
		var b Broadcast
		if err := decodeRecord(val, &b); err == nil {
			all = append(all, b)
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	for i := 0; len(all)-i > BroadcastCap && i < len(all); i++ {
		if all[i].Active() {
			continue
		}
		if err := deleteRecipients(txn, all[i].ID, all[i].Total); err != nil {
			return err
		}
		if err := txn.Delete(broadcastKey(all[i].ID)); err != nil {
			return err
		}
	}
	return nil
}

func deleteRecipients(txn *tx, id int64, total int) error {
	for chunk := 0; chunk*recipientChunk < total; chunk++ {
		if err := txn.Delete(broadcastRcptKey(id, chunk)); err != nil {
			return err
		}
	}
	return nil
}

// GetBroadcast returns one broadcast or ErrNotFound.
func (s *Store) GetBroadcast(id int64) (Broadcast, error) {
	var b Broadcast
	err := s.view(func(txn *tx) error { return getRecord(txn, broadcastKey(id), &b) })
	return b, err
}

// ListBroadcasts returns up to limit broadcasts, newest first.
func (s *Store) ListBroadcasts(limit int) ([]Broadcast, error) {
	out := []Broadcast{}
	err := s.view(func(txn *tx) error {
		return scanPrefix(txn, prefixBroadcast, true, func(_, val []byte) (bool, error) {
			var b Broadcast
			if err := decodeRecord(val, &b); err != nil {
				return true, nil
			}
			out = append(out, b)
			return len(out) < limit, nil
		})
	})
	return out, err
}

// ActiveBroadcasts returns the broadcasts with work left, oldest first.
func (s *Store) ActiveBroadcasts() ([]Broadcast, error) {
	var out []Broadcast
	err := s.view(func(txn *tx) error {
		return scanPrefix(txn, prefixBroadcast, false, func(_, val []byte) (bool, error) {
			var b Broadcast
			if err := decodeRecord(val, &b); err == nil && b.Active() {
				out = append(out, b)
			}
			return true, nil
		})
	})
	return out, err
}

// BroadcastRecipients returns up to limit recipients of broadcast id from index from.
func (s *Store) BroadcastRecipients(id int64, from, limit int) ([]int64, error) {
	var out []int64
	err := s.view(func(txn *tx) error {
		for len(out) < limit {
			chunk, off := from/recipientChunk, from%recipientChunk
			item, err := txn.Get(broadcastRcptKey(id, chunk))
			if errors.Is(err, badger.ErrKeyNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			n := 0
			if err := item.Value(func(v []byte) error {
				for i := off * 8; i+8 <= len(v) && len(out) < limit; i += 8 {
					out = append(out, int64(binary.BigEndian.Uint64(v[i:])))
					n++
				}
				return nil
			}); err != nil {
				return err
			}
			if n == 0 {
				return nil
			}
			from += n
		}
		return nil
	})
	return out, err
}

// SaveBroadcastProgress commits what the broadcaster settled, marks the users who
// blocked the bot, and finishes the broadcast when Next reaches Total. It returns the
// broadcast as stored: a broadcast cancelled meanwhile stays cancelled (the counts are
// still added), and the broadcaster drops it.
func (s *Store) SaveBroadcastProgress(p BroadcastProgress) (Broadcast, error) {
	now := s.now()
	var b Broadcast
	err := s.update(func(txn *tx) error {
		if err := getRecord(txn, broadcastKey(p.ID), &b); err != nil {
			return err
		}
		b.Sent += p.Sent
		b.Failed += p.Failed
		b.Blocked += p.Blocked
		b.Next = max(b.Next, min(p.Next, b.Total))
		b.UpdatedAt = now
		if p.LastError != "" {
			b.LastError = p.LastError
		}
		if b.State == BroadcastQueued {
			b.State = BroadcastSending
		}
		if b.State == BroadcastSending && b.Next >= b.Total {
			b.State, b.FinishedAt = BroadcastDone, now
			if err := deleteRecipients(txn, b.ID, b.Total); err != nil {
				return err
			}
		}
		for _, u := range p.BlockedUsers {
			if err := s.markUserBlocked(txn, u, now); err != nil {
				return err
			}
		}
		return putRecord(txn, broadcastKey(b.ID), &b, 0)
	})
	return b, err
}

func (s *Store) markUserBlocked(txn *tx, user int64, now time.Time) error {
	s.known.add(user)
	first := now
	item, err := txn.Get(telegramUserKey(user))
	switch {
	case err == nil:
		if err := item.Value(func(v []byte) error {
			if len(v) >= 8 {
				first = time.Unix(0, int64(binary.BigEndian.Uint64(v)))
			}
			return nil
		}); err != nil {
			return err
		}
	case !errors.Is(err, badger.ErrKeyNotFound):
		return err
	}
	return txn.Set(telegramUserKey(user), telegramUserValue(first, now))
}

// CancelBroadcast stops a queued or sending broadcast; ErrBroadcastFinished if it had
// ended already.
func (s *Store) CancelBroadcast(id int64) (Broadcast, error) {
	now := s.now()
	var b Broadcast
	err := s.updateNow(func(txn *tx) error {
		if err := getRecord(txn, broadcastKey(id), &b); err != nil {
			return err
		}
		if !b.Active() {
			return ErrBroadcastFinished
		}
		b.State, b.FinishedAt, b.UpdatedAt = BroadcastCancelled, now, now
		if err := deleteRecipients(txn, b.ID, b.Total); err != nil {
			return err
		}
		return putRecord(txn, broadcastKey(b.ID), &b, 0)
	})
	return b, err
}
