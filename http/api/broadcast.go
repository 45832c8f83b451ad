package api

import "time"

// EventBroadcast is the live feed's event for a broadcast created, cancelled or
// advanced (after each progress commit); its payload is the Broadcast.
const EventBroadcast = "broadcast"

// Broadcast is one message to every user who has talked to the bot, as
// GET /admin/broadcast lists it and POST /admin/broadcast answers it.
type Broadcast struct {
	ID        int64     `json:"id"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
	By        string    `json:"by,omitempty"`
	// State is queued, sending, done or cancelled.
	State string `json:"state"`
	// Total recipients (snapshotted at creation); Sent, Failed and Blocked count the
	// settled ones as of the last progress commit; Next is where a restart resumes.
	Total      int       `json:"total"`
	Sent       int       `json:"sent"`
	Failed     int       `json:"failed"`
	Blocked    int       `json:"blocked"`
	Next       int       `json:"next"`
	UpdatedAt  time.Time `json:"updated_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	LastError  string    `json:"last_error,omitempty"`
}

// Active reports whether the daemon still has work in b: only then can it be cancelled.
func (b Broadcast) Active() bool { return b.State == "queued" || b.State == "sending" }

// Broadcasts is GET /admin/broadcast, newest first.
type Broadcasts struct {
	Broadcasts []Broadcast `json:"broadcasts"`
}
