package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Billing is an order's paid time (issue 17), kept in the order's record so that a
// period's renewal and the order's change are one commit.
type Billing struct {
	// PaidUntil is the end of the last paid period; zero until the server is active.
	PaidUntil time.Time `json:"paid_until,omitzero"`
	// Period is how many periods have been paid: 1 once the server is active (the
	// captured hold), then one more per renewal. A renewal is the move from Period n
	// to n+1, charged in the same commit and keyed renewal:{order}{n+1}, so it cannot
	// happen twice.
	Period int `json:"period,omitempty"`
	// AutoRenewOff ends the server with its paid period: no renewal, no grace.
	AutoRenewOff bool `json:"auto_renew_off,omitempty"`
	// GraceUntil is when a suspended order's server is deleted unless paid for.
	GraceUntil time.Time `json:"grace_until,omitzero"`
	// Reminded counts the reminders sent for the period ending at PaidUntil; a
	// renewal starts it again.
	Reminded int `json:"reminded,omitempty"`
	// Op is a provider operation on the order's server waiting in the queue
	// (OpPowerOff, OpPowerOn, OpDelete), with its due time and attempts: they go
	// through the dispatcher with the same retries and dead letters as a create.
	Op         string    `json:"op,omitempty"`
	OpDue      time.Time `json:"op_due,omitzero"`
	OpAttempts int       `json:"op_attempts,omitempty"`
	// PoweredOff is set once the provider confirmed a power off, cleared by a power on.
	PoweredOff bool `json:"powered_off,omitempty"`
	// RefundedPeriod is a period whose renewal was given back: its server was found
	// gone at the provider before it ran again (a top-up renewed a suspended order,
	// and its power on was answered 404). Given back once, in the commit that sets it.
	// Kept in the order's record after the fields above (see Order.AppendBinary).
	RefundedPeriod int `json:"refunded_period,omitempty"`
}

// appendBinary adds the billing fields after an order's older ones: a record
// written before them ends there and reads back with zero billing.
func (b *Billing) appendBinary(out []byte) []byte {
	out = appendTime(out, b.PaidUntil)
	out = binary.AppendVarint(out, int64(b.Period))
	out = appendBool(out, b.AutoRenewOff)
	out = appendTime(out, b.GraceUntil)
	out = binary.AppendVarint(out, int64(b.Reminded))
	out = appendString(out, b.Op)
	out = appendTime(out, b.OpDue)
	out = binary.AppendVarint(out, int64(b.OpAttempts))
	return appendBool(out, b.PoweredOff)
}

func (b *Billing) read(r *fieldReader) {
	*b = Billing{PaidUntil: r.time(), Period: int(r.int()), AutoRenewOff: r.bool(), GraceUntil: r.time(),
		Reminded: int(r.int()), Op: r.string(), OpDue: r.time(), OpAttempts: int(r.int()), PoweredOff: r.bool()}
}

// Provider operations billing queues on an order's server.
const (
	OpPowerOff = "power_off"
	OpPowerOn  = "power_on"
	OpDelete   = "delete"
)

// QueueOp sets the order's next provider operation, due now, replacing any other
// (a power off a top-up made pointless becomes a power on).
func (o *Order) QueueOp(op string, now time.Time) {
	o.Op, o.OpDue, o.OpAttempts = op, now, 0
	o.DeadLettered = false
}

// ErrRenewedTwice is a renewal whose period was already paid: it refuses the commit.
var ErrRenewedTwice = errors.New("store: this period was already renewed")

// settleBilling keeps what follows from a change of the order's billing: every
// period it gained is charged once (a renewal entry in the ledger, noted with the
// period, and its renewal key), and the index of orders with a queued operation.
func (s *Store) settleBilling(txn *tx, old, o *Order, now time.Time) error {
	if old != nil && old.Period > 0 && o.Period > old.Period && o.PricePaid > 0 {
		for p := old.Period + 1; p <= o.Period; p++ {
			key := renewalKey(o.ID, p)
			if ok, err := exists(txn, key); err != nil {
				return err
			} else if ok {
				return fmt.Errorf("%w: order %d period %d", ErrRenewedTwice, o.ID, p)
			}
			seq, err := s.moveMoneyNoted(txn, o.UserID, LedgerRenewal, o.PricePaid, o.ID, now, fmt.Sprintf("period %d", p))
			if err != nil {
				return err
			}
			if err := txn.Set(key, u64Key("", seq)); err != nil {
				return err
			}
		}
	}
	if p := o.RefundedPeriod; p > 0 && (old == nil || old.RefundedPeriod != p) && o.PricePaid > 0 {
		if err := s.refundRenewal(txn, o, p, now); err != nil {
			return err
		}
	}
	switch {
	case o.Op != "" && (old == nil || old.Op == ""):
		return txn.Set(orderOpKey(o.ID), nil)
	case o.Op == "" && old != nil && old.Op != "":
		return txn.Delete(orderOpKey(o.ID))
	}
	return nil
}

// OrdersWithOp calls fn for every order with a provider operation queued, oldest
// first: the dispatcher's queue is rebuilt from them at start.
func (s *Store) OrdersWithOp(fn func(Order) error) error {
	return s.view(func(txn *tx) error {
		return scanPrefix(txn, prefixOrderOp, false, func(key, _ []byte) (bool, error) {
			var o Order
			if err := getRecord(txn, orderKey(int64(u64FromKey(prefixOrderOp, key))), &o); err != nil {
				if errors.Is(err, ErrNotFound) {
					return true, nil
				}
				return false, err
			}
			return true, fn(o)
		})
	})
}

// Renewed reports whether the order's period was renewed, and the ledger entry's seq.
func (s *Store) Renewed(orderID int64, period int) (seq uint64, ok bool, err error) {
	err = s.view(func(txn *tx) error {
		item, err := txn.Get(renewalKey(orderID, period))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			seq, ok = u64FromKey("", v), true
			return nil
		})
	})
	return seq, ok, err
}

// refundRenewal gives back period p's renewal of o, if it was charged and not given
// back before.
func (s *Store) refundRenewal(txn *tx, o *Order, p int, now time.Time) error {
	if charged, err := exists(txn, renewalKey(o.ID, p)); err != nil || !charged {
		return err
	}
	key := renewalRefundKey(o.ID, p)
	if done, err := exists(txn, key); err != nil || done {
		return err
	}
	seq, err := s.moveMoneyNoted(txn, o.UserID, LedgerRenewalRefund, o.PricePaid, o.ID, now, fmt.Sprintf("period %d: the server was gone", p))
	if err != nil {
		return err
	}
	return txn.Set(key, u64Key("", seq))
}

func renewalKey(orderID int64, period int) []byte { return periodKey(prefixRenewal, orderID, period) }

func renewalRefundKey(orderID int64, period int) []byte {
	return periodKey(prefixRenewalRefund, orderID, period)
}

func periodKey(prefix string, orderID int64, period int) []byte {
	return append(u64Key(prefix, uint64(orderID)), u64Key("", uint64(period))...)
}

func orderOpKey(id int64) []byte { return u64Key(prefixOrderOp, uint64(id)) }
