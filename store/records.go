package store

import (
	"encoding"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"time"
)

// The records written on every order, message and page view (orders, balances, ledger
// entries, windows, outbox messages, visitors) are stored in a compact binary form: JSON encoding and decoding
// were a third of the CPU an order cost. A binary record starts with recordTag; a JSON
// one (everything written before, and every other kind) with '{', so both read back.
// Fields are appended in a fixed order: a new field goes at the end, and a decoder
// that runs out of bytes leaves the remaining fields zero.
const recordTag = 0x01

// binaryRecord is a record kind with a binary form.
type binaryRecord interface {
	encoding.BinaryAppender
	encoding.BinaryUnmarshaler
}

// encodeRecord returns v's stored form.
func encodeRecord(v any) ([]byte, error) {
	if r, ok := v.(encoding.BinaryAppender); ok {
		size := 128 // most records fit
		if h, ok := v.(sizeHinter); ok {
			size = h.encodedSizeHint()
		}
		b := make([]byte, 1, size)
		b[0] = recordTag
		return r.AppendBinary(b)
	}
	return json.Marshal(v)
}

// sizeHinter is a record kind whose stored form can outgrow encodeRecord's first
// buffer: growing it was 2 % of the bytes an orders run allocated (an order outgrew it
// twice, to 512 bytes for the 230 or so of an active one) and 3 % of the webhook's CPU
// (a reply with its text and buttons).
type sizeHinter interface {
	encodedSizeHint() int
}

// encodedSizeHint is the order's strings and events plus what its numbers and times
// take at most in the usual case (ids under 2^42, every time set).
func (o *Order) encodedSizeHint() int {
	n := 160 + len(o.Status) + len(o.SpecID) + len(o.Region) + len(o.Provider) + len(o.PlanID) +
		len(o.Money) + len(o.LastError) + len(o.IPAddress) + len(o.InstanceID) + len(o.Op)
	for _, e := range o.History {
		n += 16 + len(e.Event) + len(e.Status) + len(e.Error)
	}
	return n
}

func (m *OutboxMessage) encodedSizeHint() int {
	n := 64 + len(m.Text) + len(m.ParseMode) + len(m.ReplyMarkup) + len(m.Status) +
		len(m.LastError) + len(m.CallbackQueryID)
	if m.Invoice != nil {
		n += 256
	}
	return n
}

// decodeRecord reads either stored form into v.
func decodeRecord(b []byte, v any) error {
	if len(b) > 0 && b[0] == recordTag {
		r, ok := v.(encoding.BinaryUnmarshaler)
		if !ok {
			return errors.New("store: binary record read into a kind without a binary form")
		}
		return r.UnmarshalBinary(b[1:])
	}
	return json.Unmarshal(b, v)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendTime keeps the instant to the nanosecond; the zero time is one byte.
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	b = append(b, 1)
	return binary.AppendVarint(b, t.UnixNano())
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// fieldReader decodes fields in order; the first error sticks and later reads return
// zero values, so a decoder checks err once at the end.
type fieldReader struct {
	b   []byte
	err error
	// whole, when set, is a copy of all of b as a string: string() then returns parts
	// of it rather than a new string per field. An order has a dozen strings or more
	// (its history's events among them), which were 4 % of the objects an orders run
	// allocated.
	whole string
}

// sharedFieldReader reads b's strings as parts of one copy of it.
func sharedFieldReader(b []byte) fieldReader { return fieldReader{b: b, whole: string(b)} }

var errShortRecord = errors.New("store: binary record is truncated")

// int reads what binary.AppendVarint wrote: a zig-zag encoded uvarint.
func (r *fieldReader) int() int64 {
	ux := r.uint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

func (r *fieldReader) uint() uint64 {
	if r.err != nil || len(r.b) == 0 {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShortRecord
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *fieldReader) string() string {
	n := r.uint()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)) {
		r.err = errShortRecord
		return ""
	}
	var s string
	if r.whole != "" {
		start := len(r.whole) - len(r.b)
		s = r.whole[start : start+int(n)]
	} else {
		s = string(r.b[:n])
	}
	r.b = r.b[n:]
	return s
}

func (r *fieldReader) bool() bool {
	if r.err != nil || len(r.b) == 0 {
		return false
	}
	v := r.b[0] != 0
	r.b = r.b[1:]
	return v
}

// time reads what appendTime wrote, in UTC as a JSON round trip of a UTC time gives.
func (r *fieldReader) time() time.Time {
	if !r.bool() {
		return time.Time{}
	}
	return time.Unix(0, r.int()).UTC()
}

func (o *Order) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendVarint(b, o.ID)
	b = binary.AppendVarint(b, o.UserID)
	b = binary.AppendVarint(b, o.TelegramUserID)
	b = binary.AppendVarint(b, o.ChatID)
	b = appendString(b, o.Status)
	b = appendString(b, o.SpecID)
	b = appendString(b, o.Region)
	b = appendString(b, o.Provider)
	b = appendString(b, o.PlanID)
	b = binary.AppendVarint(b, o.PricePaid)
	b = appendString(b, o.Money)
	b = binary.AppendVarint(b, int64(o.Attempts))
	b = appendTime(b, o.DueAt)
	b = appendTime(b, o.QueuedAt)
	b = appendString(b, o.LastError)
	b = appendString(b, o.IPAddress)
	b = appendString(b, o.InstanceID)
	b = appendBool(b, o.DeadLettered)
	b = appendTime(b, o.CreatedAt)
	b = appendTime(b, o.UpdatedAt)
	b = binary.AppendUvarint(b, uint64(len(o.History)))
	for _, e := range o.History {
		b = appendTime(b, e.At)
		b = appendString(b, e.Event)
		b = appendString(b, e.Status)
		b = binary.AppendVarint(b, int64(e.Attempt))
		b = appendString(b, e.Error)
	}
	b = appendTime(b, o.SettleUntil)
	b = appendBool(b, o.Terminating)
	b = o.Billing.appendBinary(b)
	b = binary.AppendUvarint(b, uint64(o.indexed))
	return binary.AppendVarint(b, int64(o.RefundedPeriod)), nil
}

func (o *Order) UnmarshalBinary(b []byte) error {
	r := sharedFieldReader(b)
	*o = Order{
		ID: r.int(), UserID: r.int(), TelegramUserID: r.int(), ChatID: r.int(),
		Status: r.string(), SpecID: r.string(), Region: r.string(), Provider: r.string(), PlanID: r.string(),
		PricePaid: r.int(), Money: r.string(), Attempts: int(r.int()),
		DueAt: r.time(), QueuedAt: r.time(),
		LastError: r.string(), IPAddress: r.string(), InstanceID: r.string(),
		DeadLettered: r.bool(), CreatedAt: r.time(), UpdatedAt: r.time(),
	}
	n := r.uint()
	if n > uint64(len(r.b)) { // every event takes at least a byte
		return errShortRecord
	}
	if n > 0 {
		o.History = make([]OrderEvent, n)
		for i := range o.History {
			o.History[i] = OrderEvent{At: r.time(), Event: r.string(), Status: r.string(), Attempt: int(r.int()), Error: r.string()}
		}
	}
	o.SettleUntil, o.Terminating = r.time(), r.bool()
	o.Billing.read(&r)
	o.indexed = uint16(r.uint()) // 0 in records written before it was kept
	o.RefundedPeriod = int(r.int())
	return r.err
}

func (b *Balance) AppendBinary(out []byte) ([]byte, error) {
	out = binary.AppendVarint(out, b.UserID)
	out = binary.AppendVarint(out, b.Available)
	out = binary.AppendVarint(out, b.Held)
	out = appendTime(out, b.UpdatedAt)
	return binary.AppendUvarint(out, b.Seq), nil
}

func (b *Balance) UnmarshalBinary(in []byte) error {
	r := fieldReader{b: in}
	*b = Balance{UserID: r.int(), Available: r.int(), Held: r.int(), UpdatedAt: r.time(), Seq: r.uint()}
	return r.err
}

func (e *LedgerEntry) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendUvarint(b, e.Seq)
	b = binary.AppendVarint(b, e.UserID)
	b = appendString(b, e.Kind)
	b = binary.AppendVarint(b, e.Amount)
	b = binary.AppendVarint(b, e.OrderID)
	b = binary.AppendVarint(b, e.Available)
	b = binary.AppendVarint(b, e.Held)
	b = appendTime(b, e.At)
	return appendString(b, e.Note), nil
}

func (e *LedgerEntry) UnmarshalBinary(b []byte) error {
	r := fieldReader{b: b}
	*e = LedgerEntry{
		Seq: r.uint(), UserID: r.int(), Kind: r.string(), Amount: r.int(), OrderID: r.int(),
		Available: r.int(), Held: r.int(), At: r.time(), Note: r.string(),
	}
	return r.err
}

func (w *Window) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendVarint(b, int64(w.Count))
	b = appendTime(b, w.ResetAt)
	return appendBool(b, w.Warned), nil
}

func (w *Window) UnmarshalBinary(b []byte) error {
	r := fieldReader{b: b}
	*w = Window{Count: int(r.int()), ResetAt: r.time(), Warned: r.bool()}
	return r.err
}

// AppendBinary stores everything but LogText, which is never stored.
func (m *OutboxMessage) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendUvarint(b, m.ID)
	b = binary.AppendVarint(b, m.ChatID)
	b = appendString(b, m.Text)
	b = appendString(b, m.ParseMode)
	b = appendString(b, string(m.ReplyMarkup))
	b = appendString(b, m.Status)
	b = binary.AppendVarint(b, int64(m.Attempts))
	b = appendString(b, m.LastError)
	b = appendTime(b, m.CreatedAt)
	b = appendTime(b, m.NextAt)
	b = appendTime(b, m.SentAt)
	b = appendString(b, m.CallbackQueryID)
	b = binary.AppendVarint(b, m.SecretOrderID)
	var invoice []byte
	if m.Invoice != nil {
		var err error
		if invoice, err = json.Marshal(m.Invoice); err != nil {
			return nil, err
		}
	}
	return appendString(b, string(invoice)), nil
}

func (m *OutboxMessage) UnmarshalBinary(b []byte) error {
	r := fieldReader{b: b}
	*m = OutboxMessage{ID: r.uint(), ChatID: r.int(), Text: r.string(), ParseMode: r.string()}
	if markup := r.string(); markup != "" {
		m.ReplyMarkup = []byte(markup)
	}
	m.Status, m.Attempts, m.LastError = r.string(), int(r.int()), r.string()
	m.CreatedAt, m.NextAt, m.SentAt = r.time(), r.time(), r.time()
	m.CallbackQueryID, m.SecretOrderID = r.string(), r.int()
	if invoice := r.string(); invoice != "" && r.err == nil {
		m.Invoice = &InvoiceRequest{}
		if err := json.Unmarshal([]byte(invoice), m.Invoice); err != nil {
			return err
		}
	}
	return r.err
}

func (v *Visitor) AppendBinary(b []byte) ([]byte, error) {
	b = appendTime(b, v.TS)
	b = appendString(b, v.IP)
	b = appendString(b, v.Slug)
	b = appendString(b, v.Country)
	b = appendString(b, v.City)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Lat))
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Lon)), nil
}

func (v *Visitor) UnmarshalBinary(b []byte) error {
	r := fieldReader{b: b}
	*v = Visitor{TS: r.time(), IP: r.string(), Slug: r.string(), Country: r.string(), City: r.string()}
	if r.err != nil {
		return r.err
	}
	if len(r.b) >= 16 {
		v.Lat = math.Float64frombits(binary.LittleEndian.Uint64(r.b))
		v.Lon = math.Float64frombits(binary.LittleEndian.Uint64(r.b[8:]))
	} else if len(r.b) != 0 {
		return errShortRecord
	}
	return nil
}

var (
	_ binaryRecord = (*OutboxMessage)(nil)
	_ binaryRecord = (*Visitor)(nil)
	_ binaryRecord = (*Order)(nil)
	_ binaryRecord = (*Balance)(nil)
	_ binaryRecord = (*LedgerEntry)(nil)
	_ binaryRecord = (*Window)(nil)
)

// A sealed password is written when an order starts, read when its message is sent,
// rewritten when it is marked done and read by every sweep.
func (p *SealedPassword) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendVarint(b, p.OrderID)
	b = binary.AppendUvarint(b, p.Epoch)
	b = binary.AppendUvarint(b, uint64(len(p.Sealed)))
	b = append(b, p.Sealed...)
	return appendTime(b, p.DoneAt), nil
}

func (p *SealedPassword) UnmarshalBinary(b []byte) error {
	r := fieldReader{b: b}
	*p = SealedPassword{OrderID: r.int(), Epoch: r.uint()}
	if s := r.string(); s != "" {
		p.Sealed = []byte(s)
	}
	p.DoneAt = r.time()
	return r.err
}

// A simulated server is written by every create of the built-in provider.
func (v *SimServer) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendUvarint(b, v.Seq)
	b = appendString(b, v.Label)
	b = appendString(b, v.IPv4)
	b = appendString(b, v.Status)
	b = appendString(b, v.Region)
	b = appendString(b, v.Plan)
	return appendTime(b, v.CreatedAt), nil
}

func (v *SimServer) UnmarshalBinary(b []byte) error {
	r := fieldReader{b: b}
	*v = SimServer{Seq: r.uint(), Label: r.string(), IPv4: r.string(), Status: r.string(), Region: r.string(), Plan: r.string(), CreatedAt: r.time()}
	return r.err
}
