package api

import "time"

// User is GET /admin/users/:id: one user's balance and ledger (oldest entry first, as
// the store keeps it). Amounts are minor units of the catalogue's currency.
type User struct {
	Balance Balance       `json:"balance"`
	Ledger  []LedgerEntry `json:"ledger"`
}

// Balance is a user's money; POST /admin/users/:id/deposit answers it after the credit.
type Balance struct {
	UserID    int64     `json:"user_id"`
	Available int64     `json:"available"`
	Held      int64     `json:"held"`
	UpdatedAt time.Time `json:"updated_at"`
}

// LedgerEntry is one move of a user's money: deposit, hold, capture or release.
type LedgerEntry struct {
	Seq       uint64    `json:"seq"`
	UserID    int64     `json:"user_id"`
	Kind      string    `json:"kind"`
	Amount    int64     `json:"amount"`
	OrderID   int64     `json:"order_id,omitempty"`
	Available int64     `json:"available_after"`
	Held      int64     `json:"held_after"`
	At        time.Time `json:"at"`
	Note      string    `json:"note,omitempty"`
}

// Comments is GET /api/admin/comments: every slug's comments, newest first.
type Comments struct {
	Comments []Comment `json:"comments"`
}

type Comment struct {
	ID        uint64     `json:"id"`
	Slug      string     `json:"slug"`
	Name      string     `json:"name"`
	Content   string     `json:"content"`
	IP        string     `json:"ip"`
	CreatedAt time.Time  `json:"created_at"`
	EditedAt  *time.Time `json:"edited_at"`
}

// Inquiries is GET /api/admin/inquiries: contact-form messages, newest first.
type Inquiries struct {
	Inquiries []Inquiry `json:"inquiries"`
}

// Inquiry is one contact-form message; Read is set by POST
// /api/admin/inquiries/:id/read, which answers the inquiry as it now stands.
type Inquiry struct {
	ID        uint64    `json:"id"`
	Name      string    `json:"name"`
	Email     string    `json:"email"`
	Message   string    `json:"message"`
	IP        string    `json:"ip"`
	CreatedAt time.Time `json:"created_at"`
	Read      bool      `json:"read"`
}

// Visitors is GET /api/admin/visitors?limit=: the visitor log's newest hits with where
// they came from, for the console's map. It leaves out the IP the log keeps.
type Visitors struct {
	Visitors []VisitorPoint `json:"visitors"`
}

type VisitorPoint struct {
	TS      time.Time `json:"ts"`
	Country string    `json:"country"`
	City    string    `json:"city"`
	Lat     float64   `json:"lat"`
	Lon     float64   `json:"lon"`
}

// LogPage is GET /admin/logs?since=&level=&limit=: the daemon's own log records after
// sequence number since, oldest first, secrets masked before they were kept. Last is
// the newest sequence number the daemon holds (the next call's since); Gap says
// records after since were already pushed out of the daemon's bounded memory.
type LogPage struct {
	Records []LogRecord `json:"records"`
	Last    uint64      `json:"last"`
	Gap     bool        `json:"gap,omitempty"`
}

type LogRecord struct {
	Seq   uint64    `json:"seq"`
	Time  time.Time `json:"time"`
	Level string    `json:"level"` // DEBUG, INFO, WARN, ERROR
	Msg   string    `json:"msg"`
	// Attrs are the record's attributes as key=value text, as the text log shows them.
	Attrs string `json:"attrs,omitempty"`
}
