package telegramfake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// webhookState is the fake's webhook and getUpdates queue, guarded by Server.mu.
type webhookState struct {
	url, secret    string
	allowed        []string
	lastError      string
	lastErrorAt    time.Time
	commands       string
	updates        []json.RawMessage // queued for getUpdates, in update_id order
	confirmedBelow int64             // updates below this offset were confirmed
	polls          int
}

// Webhook is what setWebhook last set.
type Webhook struct {
	URL, Secret    string
	AllowedUpdates []string
	Commands       string // the setMyCommands "commands" parameter, as sent
}

// Webhook returns the webhook as hangar set it.
func (s *Server) Webhook() Webhook {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Webhook{URL: s.hook.url, Secret: s.hook.secret, AllowedUpdates: s.hook.allowed, Commands: s.hook.commands}
}

// SetWebhookForTest sets a webhook as another tool would have.
func (s *Server) SetWebhookForTest(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook.url = url
}

// SetDeliveryError records a failed delivery, as getWebhookInfo then reports it.
func (s *Server) SetDeliveryError(msg string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook.lastError, s.hook.lastErrorAt = msg, at
}

// QueueUpdate makes an update (JSON with its update_id) available to getUpdates.
func (s *Server) QueueUpdate(raw []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook.updates = append(s.hook.updates, json.RawMessage(raw))
	s.notify()
}

// Confirmed is the offset hangar has confirmed with getUpdates: every update below it
// is gone from Telegram.
func (s *Server) Confirmed() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hook.confirmedBelow
}

// Polls counts getUpdates calls.
func (s *Server) Polls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hook.polls
}

func updateID(raw json.RawMessage) int64 {
	var u struct {
		ID int64 `json:"update_id"`
	}
	_ = json.Unmarshal(raw, &u)
	return u.ID
}

// handleWebhook answers the webhook methods and getUpdates; false means not one.
func (s *Server) handleWebhook(w http.ResponseWriter, r *http.Request, method string, p map[string]string) bool {
	switch method {
	case "setWebhook":
		var allowed []string
		_ = json.Unmarshal([]byte(p["allowed_updates"]), &allowed)
		s.mu.Lock()
		s.hook.url, s.hook.secret, s.hook.allowed = p["url"], p["secret_token"], allowed
		if p["drop_pending_updates"] == "true" {
			s.hook.updates = nil
		}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: true})
	case "deleteWebhook":
		s.mu.Lock()
		s.hook.url, s.hook.secret = "", ""
		if p["drop_pending_updates"] == "true" {
			s.hook.updates = nil
		}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: true})
	case "setMyCommands":
		s.mu.Lock()
		s.hook.commands = p["commands"]
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: true})
	case "getWebhookInfo":
		s.mu.Lock()
		info := map[string]any{"url": s.hook.url, "has_custom_certificate": false, "pending_update_count": len(s.hook.updates)}
		if s.hook.lastError != "" {
			info["last_error_message"] = s.hook.lastError
			info["last_error_date"] = s.hook.lastErrorAt.Unix()
		}
		if len(s.hook.allowed) > 0 {
			info["allowed_updates"] = s.hook.allowed
		}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: info})
	case "getUpdates":
		s.getUpdates(w, r, p)
	default:
		return false
	}
	return true
}

// getUpdates confirms everything below offset, then answers what is queued at or
// after it, waiting up to timeout seconds (capped at 2 s here) for something to come.
func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, p map[string]string) {
	offset, _ := strconv.ParseInt(p["offset"], 10, 64)
	timeout, _ := strconv.Atoi(p["timeout"])
	deadline := time.Now().Add(min(time.Duration(timeout)*time.Second, 2*time.Second))
	s.mu.Lock()
	s.hook.polls++
	if s.hook.url != "" {
		s.mu.Unlock()
		writeJSON(w, http.StatusConflict, apiResponse{ErrorCode: 409, Description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"})
		return
	}
	if offset > s.hook.confirmedBelow {
		s.hook.confirmedBelow = offset
		kept := s.hook.updates[:0]
		for _, u := range s.hook.updates {
			if updateID(u) >= offset {
				kept = append(kept, u)
			}
		}
		s.hook.updates = kept
	}
	for len(s.hook.updates) == 0 && time.Now().Before(deadline) {
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
		case <-r.Context().Done():
			return
		}
		s.mu.Lock()
	}
	out := append([]json.RawMessage{}, s.hook.updates...)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: out})
}
