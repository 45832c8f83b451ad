package store

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Order statuses, as the seed defines them.
const (
	OrderPending      = "pending"
	OrderProvisioning = "provisioning"
	OrderActive       = "active"
	OrderFailed       = "failed"
	OrderCancelled    = "cancelled"
	OrderTerminated   = "terminated"
	// OrderSuspended is a server powered off for an unpaid period (issue 17): a
	// top-up within the grace brings it back, the end of the grace deletes it.
	OrderSuspended = "suspended"
)

// OrderStatuses lists every status, in lifecycle order.
var OrderStatuses = []string{OrderPending, OrderProvisioning, OrderActive, OrderSuspended, OrderFailed, OrderCancelled, OrderTerminated}

// Money states of an order: funds are held at acceptance, then captured once or
// released once.
const (
	MoneyNone     = ""
	MoneyHeld     = "held"
	MoneyCaptured = "captured"
	MoneyReleased = "released"
)

// ErrOrderRateLimited is returned by CreateOrder when the user's order window is full.
var ErrOrderRateLimited = errors.New("store: too many orders in the window")

// ErrRepeatedOrder is CreateOrder's answer to a request whose idempotency key made an
// order already: that order comes back with it, and nothing new is stored or held.
var ErrRepeatedOrder = errors.New("store: this idempotency key already made an order")

// IdempotencyTTL is how long an order request's idempotency key is remembered.
const IdempotencyTTL = 24 * time.Hour

// OrderEvent is one step of an order's history.
type OrderEvent struct {
	At      time.Time `json:"at"`
	Event   string    `json:"event"`
	Status  string    `json:"status"`
	Attempt int       `json:"attempt"`
	Error   string    `json:"error,omitempty"`
}

// maxHistory bounds an order's history; the first and the latest steps are kept.
const maxHistory = 40

// MaxHistory is maxHistory for readers that must know whether a history was cut short.
const MaxHistory = maxHistory

// Order is one server order and its lifecycle.
type Order struct {
	ID             int64        `json:"order_id"`
	UserID         int64        `json:"user_id"`
	TelegramUserID int64        `json:"telegram_user_id"`
	ChatID         int64        `json:"chat_id"`
	Status         string       `json:"status"`
	SpecID         string       `json:"spec_id"`
	Region         string       `json:"region"`
	Provider       string       `json:"provider"`
	PlanID         string       `json:"plan_id"`
	PricePaid      int64        `json:"price_paid"`
	Money          string       `json:"money,omitempty"`
	Attempts       int          `json:"attempts"`
	DueAt          time.Time    `json:"due_at,omitzero"`
	QueuedAt       time.Time    `json:"queued_at,omitzero"`
	LastError      string       `json:"last_error,omitempty"`
	IPAddress      string       `json:"ip_address,omitempty"`
	InstanceID     string       `json:"instance_id,omitempty"`
	DeadLettered   bool         `json:"dead_lettered,omitempty"`
	CreatedAt      time.Time    `json:"created_at"`
	UpdatedAt      time.Time    `json:"updated_at"`
	History        []OrderEvent `json:"history,omitempty"`
	// SettleUntil is set when a crash or stop caught the order provisioning: a create
	// may still be finishing at the provider, so none is made before this time.
	SettleUntil time.Time `json:"settle_until,omitzero"`
	// Terminating marks an active order whose server deletion was asked for and not yet
	// confirmed by the provider; it is retried until it is.
	Terminating bool `json:"terminating,omitempty"`
	Billing
	// indexed says which of the order's status-index keys were ever written: a bit per
	// status of OrderStatuses, and statusesTracked once saveOrder has kept them from
	// the order's creation on. A status key whose bit is clear never had a version, so
	// its write is marked born (kv's MarkBorn) and, when the order moves on before the
	// applier writes it, neither it nor its delete reaches Badger: the provisioning key
	// of every order's first attempt, a tombstone an order until then. Kept by
	// saveOrder alone, from the stored order; orders stored before it have no bits and
	// are never marked.
	indexed uint16
	// IdempotencyKey, on a new order only, is the client's key for its request (the
	// HTTP Idempotency-Key): a repeat of the same key by the same user returns the
	// first order (ErrRepeatedOrder). Not part of the stored record.
	IdempotencyKey string `json:"-"`
}

// statusesTracked marks an order whose indexed bits are complete.
const statusesTracked = 1 << 15

// statusBit is status's bit in Order.indexed; 0 for a status not in OrderStatuses.
func statusBit(status string) uint16 {
	if i := slices.Index(OrderStatuses, status); i >= 0 {
		return 1 << i
	}
	return 0
}

// WaitingRetry reports whether a pending order is waiting for a retry's due time.
func (o *Order) WaitingRetry() bool { return o.Status == OrderPending && o.Attempts > 0 }

// Terminal reports whether the order will never run again by itself.
func (o *Order) Terminal() bool {
	switch o.Status {
	case OrderActive, OrderSuspended, OrderFailed, OrderCancelled, OrderTerminated:
		return true
	}
	return false
}

// Record appends a history step.
func (o *Order) Record(at time.Time, event, errMsg string) {
	o.History = append(o.History, OrderEvent{At: at, Event: event, Status: o.Status, Attempt: o.Attempts, Error: errMsg})
	if len(o.History) > maxHistory {
		o.History = append(o.History[:1], o.History[len(o.History)-maxHistory+1:]...)
	}
}

// OrderLimit caps how many orders one user may create per window (durably).
type OrderLimit struct {
	Max    int
	Window time.Duration
}

// CreateOrder stores a new pending order, holds its price from the balance of its
// user_id (seed 002's account; telegram_user_id is only where messages go) and counts
// it against that user's order window, all in one transaction. It returns
// ErrInsufficientFunds or ErrOrderRateLimited without storing anything.
func (s *Store) CreateOrder(o Order, limit OrderLimit, notes ...OutboxMessage) (Order, error) {
	id, err := s.nextSeq("order")
	if err != nil {
		return Order{}, err
	}
	now := s.now()
	o.ID = int64(id)
	if o.UserID == 0 {
		// Seed 002: a user met only through the bot has their Telegram id as user_id.
		o.UserID = o.TelegramUserID
	}
	o.Status = OrderPending
	o.CreatedAt, o.UpdatedAt, o.DueAt, o.QueuedAt = now, now, now, now
	o.Attempts = 0
	o.History = nil
	o.Record(now, "enqueued", "")
	notes, err = s.assignIDs(notes, now)
	if err != nil {
		return Order{}, err
	}
	var out Order
	repeated := false
	err = s.updateNow(func(txn *tx) error {
		var idem []byte
		if o.IdempotencyKey != "" {
			idem = idempotencyKey(o.UserID, o.IdempotencyKey)
			item, err := txn.Get(idem)
			switch {
			case err == nil:
				// A retry of a request that made an order: that order, nothing new.
				var id []byte
				if id, err = item.ValueCopy(nil); err != nil {
					return err
				}
				if len(id) != 8 {
					return fmt.Errorf("store: idempotency record of user %d is %d bytes", o.UserID, len(id))
				}
				if err := getRecord(txn, orderKey(int64(binary.BigEndian.Uint64(id))), &out); err != nil {
					return err
				}
				repeated = true
				return nil
			case !errors.Is(err, badger.ErrKeyNotFound):
				return err
			}
		}
		if limit.Max > 0 {
			if err := countOrder(txn, o.UserID, limit, now); err != nil {
				return err
			}
		}
		if err := s.saveOrder(txn, nil, &o, now); err != nil {
			return err
		}
		if err := putOutboxAll(txn, notes); err != nil {
			return err
		}
		if idem != nil {
			if err := txn.SetEntry(badger.NewEntry(idem, binary.BigEndian.AppendUint64(nil, uint64(o.ID))).WithTTL(IdempotencyTTL)); err != nil {
				return err
			}
		}
		out = o
		return nil
	})
	if err != nil {
		return Order{}, err
	}
	if repeated {
		return out, ErrRepeatedOrder
	}
	return out, nil
}

// idempotencyKey keys a user's request key: hashed, so that a client's key of any
// length and bytes takes 16.
func idempotencyKey(user int64, key string) []byte {
	h := sha256.Sum256([]byte(key))
	return append(u64Key(prefixIdempotency, uint64(user)), h[:16]...)
}

func countOrder(txn *tx, user int64, limit OrderLimit, now time.Time) error {
	var w Window
	err := getRecord(txn, orderRateKey(user), &w)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if w.ResetAt.IsZero() || !now.Before(w.ResetAt) {
		w = Window{ResetAt: now.Add(limit.Window)}
	}
	if w.Count >= limit.Max {
		return ErrOrderRateLimited
	}
	w.Count++
	return putRecord(txn, orderRateKey(user), &w, w.ResetAt.Sub(now)+time.Second)
}

// UpdateOrder applies fn to the stored order in one transaction; indexes, the
// dead-letter list and money moves follow from what fn changed (see saveOrder), and
// notes are queued in the outbox in the same commit. fn must only change o; its error
// aborts the update (nothing is written) and is returned.
func (s *Store) UpdateOrder(id int64, fn func(o *Order) error, notes ...OutboxMessage) (Order, error) {
	o, _, err := s.UpdateOrderNotify(id, fn, notes...)
	return o, err
}

// UpdateOrderNotify is UpdateOrder that also returns the queued notes with their ids,
// so the caller can hand them to the sender without it scanning the outbox.
func (s *Store) UpdateOrderNotify(id int64, fn func(o *Order) error, notes ...OutboxMessage) (Order, []OutboxMessage, error) {
	res, err := s.UpdateOrders([]OrderChange{{ID: id, Apply: fn, Notes: notes}})
	if err != nil {
		return Order{}, nil, err
	}
	return res[0].Order, res[0].Notes, res[0].Err
}

// OrderChange is one order's part of a group commit (see UpdateOrders).
type OrderChange struct {
	ID int64
	// Apply changes the order as UpdateOrder's fn does; its error leaves this order
	// untouched without failing the others.
	Apply func(o *Order) error
	// Notes are queued in the outbox with the change.
	Notes []OutboxMessage
	// Seal, when set, is asked after Apply succeeded for a sealed password to keep with
	// the change, in the same commit (the dispatcher seals an order's root password in
	// the commit that starts its first attempt, before the provider is asked).
	Seal func(o *Order) (SealedPassword, bool)
	// Once, when set, is the Telegram update_id the change comes from: the change is
	// made at most once per update within SeenUpdateTTL, and a second is
	// ErrAlreadyApplied with nothing written. A chat command's change commits before
	// its update is marked seen, so a re-delivery after a crash between the two, or
	// after the update's own commit failed, would make it again (/renew: a second
	// period paid).
	Once int64
}

// ErrAlreadyApplied is an OrderChange whose update (OrderChange.Once) made it before.
var ErrAlreadyApplied = errors.New("store: this update's change was already made")

// OrderResult is what one OrderChange came to: the order as stored and its notes with
// their ids, or Err (Apply's error, or ErrNotFound) and nothing of it written, notes
// included.
type OrderResult struct {
	Order Order
	Notes []OutboxMessage
	Err   error
}

// UpdateOrders applies many orders' changes in one commit and returns once it is
// durable: the dispatcher starts every due order, and the engine's completer records
// every server made ready, with one commit and one wait instead of one each. A change whose Apply fails, or whose order is missing, is left out on
// its own (see OrderResult.Err); any other error (from the indexes or the money, which
// Apply's change may move) fails the commit, and then nothing was written.
func (s *Store) UpdateOrders(changes []OrderChange) ([]OrderResult, error) {
	now := s.now()
	results := make([]OrderResult, len(changes))
	for i, c := range changes {
		notes, err := s.assignIDs(c.Notes, now)
		if err != nil {
			return nil, err
		}
		results[i].Notes = notes
	}
	err := s.update(func(txn *tx) error {
		for i, c := range changes {
			if err := s.changeOrder(txn, c, &results[i], now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// changeOrder applies one change inside a group commit. A missing order or Apply's
// error is the change's own (r.Err) and writes nothing; any other error fails the commit.
func (s *Store) changeOrder(txn *tx, c OrderChange, r *OrderResult, now time.Time) error {
	if c.Once != 0 {
		done, err := exists(txn, onceKey(c.Once))
		if err != nil {
			return err
		}
		if done {
			r.Err, r.Notes = ErrAlreadyApplied, nil
			return nil
		}
	}
	var old Order
	if err := getRecord(txn, orderKey(c.ID), &old); err != nil {
		if errors.Is(err, ErrNotFound) {
			r.Err, r.Notes = err, nil
			return nil
		}
		return err
	}
	updated := old
	// Apply appends to the history; old's stays as read (saveOrder compares the two).
	updated.History = slices.Clip(old.History)
	if err := c.Apply(&updated); err != nil {
		r.Err, r.Notes = err, nil
		return nil
	}
	updated.UpdatedAt = now
	if err := s.saveOrder(txn, &old, &updated, now); err != nil {
		return err
	}
	if err := putOutboxAll(txn, r.Notes); err != nil {
		return err
	}
	if c.Once != 0 {
		// As long as the update's seen-marker: Telegram delivers an update for 24 h.
		if err := txn.PutOwned(onceKey(c.Once), nil, expiry(SeenUpdateTTL+time.Second), false); err != nil {
			return err
		}
	}
	if c.Seal != nil {
		if p, ok := c.Seal(&updated); ok {
			p.OrderID = updated.ID
			if err := putRecord(txn, sealedPasswordKey(p.OrderID), &p, 0); err != nil {
				return err
			}
		}
	}
	r.Order = updated
	return nil
}

// saveOrder writes o and keeps everything derived from it consistent: the status
// index, the user index, the dead-letter list, and the money. Money moves at most once
// per state: held on acceptance (or on requeue), captured when the order becomes
// active, released when it fails or is cancelled.
func (s *Store) saveOrder(txn *tx, old, o *Order, now time.Time) error {
	if old == nil || old.Status != o.Status {
		if old != nil {
			if err := txn.Delete(orderStatusKey(old.Status, o.ID)); err != nil {
				return err
			}
		}
		key := orderStatusKey(o.Status, o.ID)
		if err := txn.Set(key, nil); err != nil {
			return err
		}
		bit := statusBit(o.Status)
		// A new order's id was never handed out before; a known order's key never
		// had a version if its bit was never set.
		if old == nil || (bit != 0 && old.indexed&statusesTracked != 0 && old.indexed&bit == 0) {
			txn.MarkBorn(key)
		}
		if old == nil {
			o.indexed = statusesTracked | bit
		} else {
			o.indexed = old.indexed | bit
		}
	} else if old != nil {
		o.indexed = old.indexed
	}
	if old == nil {
		if err := setListed(txn, orderUserKey(o.TelegramUserID, o.ID), nil); err != nil {
			return err
		}
	}
	wasDead := old != nil && old.DeadLettered
	switch {
	case o.DeadLettered && !wasDead:
		if err := txn.Set(deadLetterKey(o.ID), nil); err != nil {
			return err
		}
	case !o.DeadLettered && wasDead:
		if err := txn.Delete(deadLetterKey(o.ID)); err != nil {
			return err
		}
	}
	if err := s.settleMoney(txn, o, now); err != nil {
		return err
	}
	if err := s.settleBilling(txn, old, o, now); err != nil {
		return err
	}
	return putRecord(txn, orderKey(o.ID), o, 0)
}

func (s *Store) settleMoney(txn *tx, o *Order, now time.Time) error {
	if o.PricePaid <= 0 {
		return nil
	}
	var kind, next string
	switch {
	case o.Status == OrderPending && o.Money != MoneyHeld:
		kind, next = LedgerHold, MoneyHeld
	case o.Status == OrderActive && o.Money == MoneyHeld:
		kind, next = LedgerCapture, MoneyCaptured
	case (o.Status == OrderFailed || o.Status == OrderCancelled) && o.Money == MoneyHeld:
		kind, next = LedgerRelease, MoneyReleased
	default:
		return nil
	}
	if err := s.moveMoney(txn, o.UserID, kind, o.PricePaid, o.ID, now); err != nil {
		return err
	}
	o.Money = next
	return nil
}

// maxOrderIDJump is the furthest OrderIDsPast moves the order ids: a label further
// ahead than this many orders is not taken for one a restore lost.
const maxOrderIDJump = 1 << 20

// OrderIDsPast makes new orders' ids higher than id: a provider holds a server
// labelled with it (hangar-order-<id>) that no order here accounts for, as after a
// restore from an older backup, and an order given that id could never have a server.
func (s *Store) OrderIDsPast(id int64) (advanced bool, err error) {
	if id <= 0 {
		return false, nil
	}
	return s.db.SeqPast(string(seqKey("order")), uint64(id), maxOrderIDJump)
}

// GetOrder returns one order.
func (s *Store) GetOrder(id int64) (Order, error) {
	var o Order
	err := s.view(func(txn *tx) error { return getRecord(txn, orderKey(id), &o) })
	return o, err
}

// ListOrders returns up to limit orders newest first, optionally with one status,
// starting below the id before (0: from the newest).
func (s *Store) ListOrders(status string, limit int, before int64) ([]Order, error) {
	if status == "" {
		return s.loadOrders(prefixOrder, true, before, limit)
	}
	return s.loadOrders(orderStatusPrefix(status), false, before, limit)
}

// UserOrders returns up to limit orders sent to one Telegram user, newest first (what
// their chat's /servers lists; money follows user_id, not this).
func (s *Store) UserOrders(user int64, limit int) ([]Order, error) {
	return s.loadOrders(orderUserPrefix(user), false, 0, limit)
}

// DeadLetters returns up to limit dead-lettered orders, newest first.
func (s *Store) DeadLetters(limit int) ([]Order, error) {
	return s.loadOrders(prefixDeadLetter, false, 0, limit)
}

// loadOrders walks keys prefix+{id BE} newest first below before. The keys are the
// orders themselves (direct) or an index whose ids point at them.
func (s *Store) loadOrders(prefix string, direct bool, before int64, limit int) ([]Order, error) {
	var out []Order
	err := s.view(func(txn *tx) error {
		opts := badger.DefaultIteratorOptions
		opts.Reverse = true
		opts.Prefix = []byte(prefix)
		opts.PrefetchValues = direct
		it := txn.NewIterator(opts)
		defer it.Close()
		seek := u64Key(prefix, ^uint64(0))
		if before > 0 {
			seek = u64Key(prefix, uint64(before-1))
		}
		for it.Seek(seek); it.ValidForPrefix([]byte(prefix)) && len(out) < limit; it.Next() {
			var o Order
			var err error
			if direct {
				err = it.Item().Value(func(v []byte) error { return decodeRecord(v, &o) })
			} else {
				err = getRecord(txn, orderKey(int64(u64FromKey(prefix, it.Item().Key()))), &o)
			}
			if err != nil {
				return err
			}
			out = append(out, o)
		}
		return nil
	})
	return out, err
}

// OrdersWithStatus calls fn for every order with the status, oldest first; used at
// start to rebuild the dispatcher's queue from the index without a full scan.
func (s *Store) OrdersWithStatus(status string, fn func(Order) error) error {
	return s.view(func(txn *tx) error {
		return scanPrefix(txn, orderStatusPrefix(status), false, func(key, _ []byte) (bool, error) {
			var o Order
			if err := getRecord(txn, orderKey(int64(u64FromKey(orderStatusPrefix(status), key))), &o); err != nil {
				return false, err
			}
			return true, fn(o)
		})
	})
}

// CountDeadLetters counts the dead-letter list.
func (s *Store) CountDeadLetters() (int, error) { return s.countPrefix(prefixDeadLetter) }

// CountOrders counts orders with a status.
func (s *Store) CountOrders(status string) (int, error) {
	return s.countPrefix(orderStatusPrefix(status))
}

// PurgeDeadLetters empties the dead-letter list; the orders stay failed and keep
// their records, and a dead-lettered provider operation is dropped from its order. It
// returns how many left the list.
func (s *Store) PurgeDeadLetters() (int, error) {
	var ids []int64
	err := s.view(func(txn *tx) error {
		return scanPrefix(txn, prefixDeadLetter, false, func(key, _ []byte) (bool, error) {
			ids = append(ids, int64(u64FromKey(prefixDeadLetter, key)))
			return true, nil
		})
	})
	if err != nil {
		return 0, err
	}
	purged := 0
	for _, id := range ids {
		_, err := s.UpdateOrder(id, func(o *Order) error {
			if !o.DeadLettered {
				return errNothingToDo
			}
			o.DeadLettered = false
			if o.Op != "" {
				// A dead-lettered provider operation is dropped with its dead letter.
				// Left on the order it would wait unseen, and run at the next start,
				// which rebuilds the queue from every order with an operation: a purged
				// delete would delete the server after a restart. Billing queues a paid
				// server's power on again; a suspended server whose power off was
				// dropped stays on until its grace ends and it is deleted.
				o.Op, o.OpAttempts, o.OpDue = "", 0, time.Time{}
			}
			o.Record(s.now(), "purged", "")
			return nil
		})
		switch {
		case err == nil:
			purged++
		case errors.Is(err, errNothingToDo), errors.Is(err, ErrNotFound):
		default:
			return purged, fmt.Errorf("store: purge order %d: %w", id, err)
		}
	}
	return purged, nil
}

var errNothingToDo = errors.New("store: nothing to do")
