package store

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

func TestBinaryRecordsRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 29, 21, 30, 1, 123456789, time.UTC)
	full := []binaryRecord{
		&Order{
			ID: 42, UserID: -7, TelegramUserID: 1 << 40, ChatID: -100123, Status: OrderActive, SpecID: "g6-nanode-1",
			Region: "ap-northeast", Provider: "linode", PlanID: "nano", PricePaid: 5000, Money: MoneyCaptured,
			Attempts: 3, DueAt: at, QueuedAt: at.Add(time.Second), LastError: "503: try later", IPAddress: "203.0.113.9",
			InstanceID: "i-123", DeadLettered: true, CreatedAt: at.Add(-time.Hour), UpdatedAt: at.Add(time.Minute),
			History: []OrderEvent{
				{At: at, Event: "enqueued", Status: OrderPending},
				{At: at.Add(2 * time.Second), Event: "retry", Status: OrderPending, Attempt: 1, Error: "timeout, 한국어 ok"},
			},
			SettleUntil: at.Add(90 * time.Second), Terminating: true,
			Billing: Billing{PaidUntil: at.Add(720 * time.Hour), Period: 3, AutoRenewOff: true, GraceUntil: at.Add(792 * time.Hour),
				Reminded: 2, Op: OpPowerOff, OpDue: at, OpAttempts: 1, PoweredOff: true, RefundedPeriod: 3},
			indexed: statusesTracked | statusBit(OrderPending) | statusBit(OrderActive),
		},
		&Order{ID: 1}, // zero times and no history stay zero and nil
		&Balance{UserID: 9, Available: 1_000_000, Held: -1, UpdatedAt: at, Seq: 77},
		&LedgerEntry{Seq: 3, UserID: 9, Kind: LedgerCapture, Amount: 5000, OrderID: 42, Available: 10, Held: 20, At: at, Note: "n"},
		&Window{Count: 31, ResetAt: at, Warned: true},
		&OutboxMessage{
			ID: 8, ChatID: -5, Text: "<b>hi</b>", ParseMode: "HTML", ReplyMarkup: []byte(`{"inline_keyboard":[]}`),
			Status: MessageSent, Attempts: 2, LastError: "429", CreatedAt: at, NextAt: at.Add(time.Second), SentAt: at.Add(2 * time.Second),
			CallbackQueryID: "cb-1", SecretOrderID: 42,
		},
		&Visitor{TS: at.Truncate(time.Second), IP: "2001:db8::1", Slug: "hello-world", Country: "KR", City: "Seoul", Lat: 37.5665, Lon: -126.978},
		&SealedPassword{OrderID: 42, Epoch: 1 << 62, Sealed: []byte{0, 1, 2, 0xff}, DoneAt: at},
		&SealedPassword{OrderID: 1},
		&SimServer{Seq: 12, Label: "hangar-order-42", IPv4: "198.51.100.12", Status: "running", Region: "tokyo", Plan: "nano", CreatedAt: at},
	}
	for i, want := range full {
		t.Run(reflect.TypeOf(want).Elem().Name(), func(t *testing.T) {
			b, err := encodeRecord(want)
			if err != nil || b[0] != recordTag {
				t.Fatalf("encode: %v (first byte %#x)", err, b[0])
			}
			got := reflect.New(reflect.TypeOf(want).Elem()).Interface()
			if err := decodeRecord(b, got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
			}
			// Records written before the binary form (JSON) still read, an order without
			// its index bits (they were not kept then).
			j, _ := json.Marshal(want)
			fromJSON := reflect.New(reflect.TypeOf(want).Elem()).Interface()
			wantJSON := want
			if o, ok := want.(*Order); ok {
				noBits := *o
				noBits.indexed = 0
				wantJSON = &noBits
			}
			if err := decodeRecord(j, fromJSON); err != nil || !reflect.DeepEqual(fromJSON, wantJSON) {
				t.Fatalf("from JSON: %v\n got %+v\nwant %+v", err, fromJSON, wantJSON)
			}
			// A cut record never panics; one cut inside the full order's fields does not
			// pass for the whole record. (A record that simply ends early reads its missing
			// trailing fields as zero: that is how fields are added.)
			for cut := 1; cut < len(b); cut++ {
				got := reflect.New(reflect.TypeOf(want).Elem()).Interface()
				err := decodeRecord(b[:cut], got)
				if i == 0 && err == nil && reflect.DeepEqual(got, want) {
					t.Fatalf("cut at %d of %d decoded as the whole record", cut, len(b))
				}
			}
		})
	}
}

// The binary form is what the hot path writes: an order read back through the store
// after a restart is the order written.
func TestOrdersStoredBinaryReadBackAfterRestart(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	if _, err := s.Deposit(5, 10_000); err != nil {
		t.Fatal(err)
	}
	o, err := s.CreateOrder(Order{UserID: 5, TelegramUserID: 5, Provider: "sim", SpecID: "sim-nano", Region: "tokyo", PricePaid: 5000}, OrderLimit{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = quietOpen(t, dir)
	defer s.Close()
	got, err := s.GetOrder(o.ID)
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(o)
	if err != nil || string(gotJSON) != string(wantJSON) {
		t.Fatalf("after restart: %v\n got %+v\nwant %+v", err, got, o)
	}
	b, err := s.GetBalance(5)
	if err != nil || b.Available != 5000 || b.Held != 5000 {
		t.Fatalf("balance after restart: %+v, %v", b, err)
	}
}

// LogText carries what may not be stored (a message with a secret): it never is.
func TestOutboxMessageNeverStoresLogText(t *testing.T) {
	m := &OutboxMessage{ID: 1, Text: "masked", LogText: "root password hunter2"}
	b, err := encodeRecord(m)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "hunter2") {
		t.Fatalf("stored form holds LogText: %q", b)
	}
}

// The records that outgrow encodeRecord's first buffer are encoded into one sized for
// them: a hint too small shows as a buffer that was grown (its capacity is no longer
// the hint's).
func TestLargeRecordsAreEncodedWithoutGrowing(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var history []OrderEvent
	for i := range 6 {
		history = append(history, OrderEvent{At: at, Event: "attempt_failed", Status: OrderProvisioning, Attempt: i + 1,
			Error: "provider said: 503 service unavailable, try again later"})
	}
	markup := `{"inline_keyboard":[[{"text":"Tokyo","callback_data":"region:tokyo"},{"text":"Seoul","callback_data":"region:seoul"}]]}`
	for _, tc := range []struct {
		name   string
		record interface {
			sizeHinter
			AppendBinary([]byte) ([]byte, error)
		}
	}{
		{"active order after failed attempts", &Order{ID: 1 << 40, UserID: 1 << 40, TelegramUserID: 1 << 40, ChatID: 1 << 40,
			Status: OrderActive, SpecID: "g6-nanode-1", Region: "ap-northeast", Provider: "linode", PlanID: "nano-monthly",
			PricePaid: 1 << 40, Money: MoneyCaptured, Attempts: 6, DueAt: at, QueuedAt: at,
			LastError: "provider said: 503 service unavailable", IPAddress: "203.0.113.250", InstanceID: "123456789",
			CreatedAt: at, UpdatedAt: at, History: history, SettleUntil: at,
			Billing: Billing{PaidUntil: at, Period: 12, GraceUntil: at, Reminded: 2, Op: OpPowerOff, OpDue: at, OpAttempts: 3}}},
		{"new order", &Order{ID: 7, UserID: 5, TelegramUserID: 5, ChatID: 5, Status: OrderPending, SpecID: "sim-nano",
			Region: "tokyo", Provider: "sim", PricePaid: 5000, Money: MoneyHeld, CreatedAt: at, UpdatedAt: at, QueuedAt: at,
			History: []OrderEvent{{At: at, Event: "queued", Status: OrderPending}}}},
		{"reply with buttons", &OutboxMessage{ID: 1 << 40, ChatID: 1 << 40, Text: strings.Repeat("안녕하세요 ", 40), ParseMode: "HTML",
			ReplyMarkup: []byte(markup), Status: "pending", Attempts: 3, LastError: "telegram: 429 too many requests",
			CreatedAt: at, NextAt: at, SentAt: at, CallbackQueryID: "4382bfdwdsb323b2d9", SecretOrderID: 1 << 40}},
		{"invoice", &OutboxMessage{ID: 1, ChatID: 1, Text: "pay", Status: "pending", CreatedAt: at,
			Invoice: &InvoiceRequest{Title: "Top up 500 Stars", Description: "Adds 500 Stars to your hangar balance", Payload: "topup:500:1", Label: "500 Stars", Stars: 500}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := encodeRecord(tc.record)
			if err != nil {
				t.Fatal(err)
			}
			if hint := tc.record.encodedSizeHint(); cap(b) != hint {
				t.Fatalf("encoded %d bytes into a buffer of %d: the hint %d was too small", len(b), cap(b), hint)
			}
		})
	}
}

// An order's strings are parts of one copy of its stored form: decoding allocates that
// copy and the history, not a string per field, and what it returns does not change
// when the buffer it was read from is reused (Badger's are).
func TestOrderDecodesIntoOneCopy(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	want := Order{ID: 7, UserID: 5, TelegramUserID: 5, ChatID: 5, Status: OrderActive, SpecID: "sim-nano",
		Region: "tokyo", Provider: "sim", PlanID: "nano", PricePaid: 5000, Money: MoneyCaptured, Attempts: 1,
		IPAddress: "203.0.113.9", InstanceID: "sim-7", CreatedAt: at, UpdatedAt: at,
		History: []OrderEvent{{At: at, Event: "queued", Status: OrderPending}, {At: at, Event: "provisioning", Status: OrderProvisioning, Attempt: 1},
			{At: at, Event: "succeeded", Status: OrderActive, Attempt: 1}}}
	b, err := encodeRecord(&want)
	if err != nil {
		t.Fatal(err)
	}
	var got Order
	if err := decodeRecord(b, &got); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 'x'
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after its buffer was reused the order reads\n%+v\nwant\n%+v", got, want)
	}
	b, _ = encodeRecord(&want)
	if n := testing.AllocsPerRun(100, func() { _ = decodeRecord(b, &got) }); n > 2 {
		t.Fatalf("decoding an order allocated %.0f times, want 2 (its bytes as a string, its history)", n)
	}
}

// A data directory written by the first version of hangar (Badger in its own
// transaction mode, JSON records, Badger's sequences, no write-ahead log) opens and
// reads as it was, and keeps counting where it stopped.
func TestOpensADatabaseFromBeforeTheLog(t *testing.T) {
	dir := t.TempDir()
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	order := Order{ID: 7, UserID: 5, TelegramUserID: 5, Status: OrderActive, SpecID: "sim-nano", Region: "tokyo",
		Provider: "sim", PricePaid: 5000, Money: MoneyCaptured, Attempts: 1, CreatedAt: at, UpdatedAt: at,
		History: []OrderEvent{{At: at, Event: "succeeded", Status: OrderActive, Attempt: 1}}}
	balance := Balance{UserID: 5, Available: 15000, Held: 0, UpdatedAt: at, Seq: 3}
	err = db.Update(func(txn *badger.Txn) error {
		ob, _ := json.Marshal(order)
		bb, _ := json.Marshal(balance)
		return errors.Join(
			txn.Set([]byte(metaSchemaVersion), []byte(strconv.Itoa(len(migrations)))),
			txn.Set(orderKey(7), ob), txn.Set(orderStatusKey(OrderActive, 7), nil), txn.Set(orderUserKey(5, 7), nil),
			txn.Set(balanceKey(5), bb))
	})
	if err != nil {
		t.Fatal(err)
	}
	seq, err := db.GetSequence(seqKey("order"), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for range 8 {
		last, _ = seq.Next()
	}
	if err := errors.Join(seq.Release(), db.Close()); err != nil {
		t.Fatal(err)
	}

	for run := range 2 { // and once more after this version wrote to it
		s := quietOpen(t, dir)
		got, err := s.GetOrder(7)
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(order)
		if err != nil || string(gotJSON) != string(wantJSON) {
			t.Fatalf("run %d: order 7 = %s, %v; want %s", run, gotJSON, err, wantJSON)
		}
		active, err := s.ListOrders(OrderActive, 10, 0)
		if err != nil || len(active) != 1 || active[0].ID != 7 {
			t.Fatalf("run %d: active orders %+v, %v", run, active, err)
		}
		if run == 0 {
			b, err := s.GetBalance(5)
			if err != nil || b.Available != 15000 || b.Seq != 3 {
				t.Fatalf("balance %+v, %v", b, err)
			}
			o, err := s.CreateOrder(Order{UserID: 5, TelegramUserID: 5, Provider: "sim", SpecID: "sim-nano", Region: "tokyo", PricePaid: 5000}, OrderLimit{})
			if err != nil || uint64(o.ID) <= last {
				t.Fatalf("new order %d (%v) after the old sequence's %d", o.ID, err, last)
			}
			if b, _ := s.GetBalance(5); b.Available != 10000 || b.Held != 5000 || b.Seq != 4 {
				t.Fatalf("balance after a new order %+v", b)
			}
		}
		s.Close()
	}
}
