package api

import "time"

// Event types of GET /admin/events, plus EventConn, which the client adds itself so
// that the console learns about a lost or regained stream through the same channel.
const (
	EventSnapshot  = "snapshot"
	EventOrder     = "order"
	EventMessage   = "message"
	EventRateLimit = "ratelimit"
	EventDropped   = "dropped"
	EventConn      = "conn"
)

// Event is one item of the live feed; exactly one payload field is set, matching Type.
type Event struct {
	Type      string
	Snapshot  *QueueStats
	Order     *OrderEvent
	Message   *Message
	RateLimit *RateLimitEvent
	Dropped   int
	Conn      *ConnState
	Broadcast *Broadcast
}

type OrderEvent struct {
	At      time.Time `json:"at"`
	Event   string    `json:"event"`
	OrderID int64     `json:"order_id"`
	Status  string    `json:"status"`
	Attempt int       `json:"attempt"`
	Error   string    `json:"error,omitempty"`
	UserID  int64     `json:"user_id"`
}

type RateLimitEvent struct {
	At      time.Time `json:"at"`
	UserID  int64     `json:"user_id"`
	Count   int       `json:"count"`
	Limited bool      `json:"limited"`
}

// ConnState reports the event stream's health: Connected, or the error that broke it
// and when the next attempt is due.
type ConnState struct {
	Connected bool
	Err       string
	RetryAt   time.Time
}
