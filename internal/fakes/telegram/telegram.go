package telegramfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Message is one accepted sendMessage call.
type Message struct {
	ChatID      int64
	Text        string
	ParseMode   string
	ReplyMarkup string
	At          time.Time
}

// Callback is one accepted answerCallbackQuery call.
type Callback struct {
	ID   string
	Text string
}

// Server is a fake Bot API.
type Server struct {
	*httptest.Server
	token string

	mu         sync.Mutex
	messages   []Message
	callbacks  []Callback
	throttleN  int // answer the next n sendMessage calls with 429
	retryAfter int
	down       bool
	calls      int
	changed    chan struct{}
	delay      time.Duration
	refuse     func(text string) bool
	refused    []Message
	blocked    map[int64]bool
	hook       webhookState // setWebhook, getWebhookInfo, getUpdates (webhook.go)
	pay        payState     // sendInvoice, answerPreCheckoutQuery, refundStarPayment (payments.go)
}

// New starts a fake that accepts only the given bot token.
func New(token string) *Server {
	s := &Server{token: token, changed: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// URL is the base URL to give hangar (--telegram-api).
func (s *Server) URL() string { return s.Server.URL }

// Throttle makes the next n sendMessage calls answer 429 with retry_after seconds.
func (s *Server) Throttle(n, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttleN, s.retryAfter = n, retryAfter
}

// SetDown makes every call answer 502 (as Telegram's front does in an outage) until
// SetDown(false). Nothing is recorded while down.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// SetDelay makes every sendMessage take d before it answers, as a slow Bot API does;
// a caller that gives up first gets no answer and nothing is recorded.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// RefuseEchoing makes every sendMessage whose text matches answer 400 with a
// description that quotes the whole request, as Telegram's entity-parsing errors quote
// the text they choke on. nil turns it off.
func (s *Server) RefuseEchoing(match func(text string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = match
}

// Refused returns the sendMessage calls RefuseEchoing refused, in arrival order.
func (s *Server) Refused() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.refused...)
}

// Messages returns a copy of the accepted messages, in arrival order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Callbacks returns a copy of the answered callback queries.
func (s *Server) Callbacks() []Callback {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Callback(nil), s.callbacks...)
}

// Calls counts every request, accepted or not, but getMe (the engine asks its bot's
// name once at start).
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// WaitMessages blocks until at least n messages were accepted or timeout passes, and
// returns what arrived.
func (s *Server) WaitMessages(n int, timeout time.Duration) ([]Message, bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got, ch := len(s.messages), s.changed
		s.mu.Unlock()
		if got >= n {
			return s.Messages(), true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return s.Messages(), false
		}
	}
}

// notify wakes waiters; the caller holds mu.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

type apiResponse struct {
	OK          bool            `json:"ok"`
	Result      any             `json:"result,omitempty"`
	ErrorCode   int             `json:"error_code,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  *responseParams `json:"parameters,omitempty"`
}

type responseParams struct {
	RetryAfter int `json:"retry_after,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v apiResponse) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	_, asked, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	s.mu.Lock()
	if asked != "getMe" { // the bot's one question at start, about itself
		s.calls++
	}
	down := s.down
	s.mu.Unlock()
	if down {
		http.Error(w, "Bad Gateway", http.StatusBadGateway)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/")
	tokenPart, method, ok := strings.Cut(path, "/")
	if !ok || tokenPart != "bot"+s.token {
		writeJSON(w, http.StatusUnauthorized, apiResponse{ErrorCode: 401, Description: "Unauthorized"})
		return
	}
	params, err := readParams(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: " + err.Error()})
		return
	}
	switch method {
	case "sendMessage":
		s.mu.Lock()
		delay := s.delay
		s.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		s.sendMessage(w, params)
	case "answerCallbackQuery":
		s.mu.Lock()
		s.callbacks = append(s.callbacks, Callback{ID: params["callback_query_id"], Text: params["text"]})
		s.notify()
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: true})
	case "getMe":
		writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: map[string]any{"id": 1, "is_bot": true, "first_name": "hangar", "username": "hangar_bot"}})
	default:
		if s.handleWebhook(w, r, method, params) || s.handlePayments(w, method, params) {
			return
		}
		writeJSON(w, http.StatusNotFound, apiResponse{ErrorCode: 404, Description: "Not Found: method not found"})
	}
}

func (s *Server) sendMessage(w http.ResponseWriter, p map[string]string) {
	chatID, err := strconv.ParseInt(p["chat_id"], 10, 64)
	if err != nil || chatID == 0 {
		writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: chat not found"})
		return
	}
	if p["text"] == "" {
		writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: message text is empty"})
		return
	}
	if s.answerBlocked(w, chatID) {
		return
	}
	s.mu.Lock()
	if s.refuse != nil && s.refuse(p["text"]) {
		s.refused = append(s.refused, Message{ChatID: chatID, Text: p["text"], ParseMode: p["parse_mode"], At: time.Now()})
		s.notify()
		s.mu.Unlock()
		echo, _ := json.Marshal(p)
		writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400,
			Description: "Bad Request: can't parse entities in request " + string(echo)})
		return
	}
	if s.throttleN > 0 {
		s.throttleN--
		ra := s.retryAfter
		s.mu.Unlock()
		writeJSON(w, http.StatusTooManyRequests, apiResponse{ErrorCode: 429,
			Description: fmt.Sprintf("Too Many Requests: retry after %d", ra), Parameters: &responseParams{RetryAfter: ra}})
		return
	}
	m := Message{ChatID: chatID, Text: p["text"], ParseMode: p["parse_mode"], ReplyMarkup: p["reply_markup"], At: time.Now()}
	s.messages = append(s.messages, m)
	id := len(s.messages)
	s.notify()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: map[string]any{
		"message_id": id, "date": time.Now().Unix(), "chat": map[string]any{"id": chatID, "type": "private"}, "text": m.Text,
	}})
}

// readParams accepts the encodings the Bot API accepts: multipart form, urlencoded
// form, and JSON.
func readParams(r *http.Request) (map[string]string, error) {
	out := map[string]string{}
	ct := r.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/json"):
		var raw map[string]any
		if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
			return nil, err
		}
		for k, v := range raw {
			switch v := v.(type) {
			case string:
				out[k] = v
			case float64:
				out[k] = strconv.FormatFloat(v, 'f', -1, 64)
			default:
				b, _ := json.Marshal(v)
				out[k] = string(b)
			}
		}
	case strings.HasPrefix(ct, "multipart/form-data"):
		// A method without parameters (getWebhookInfo) comes as an empty multipart body,
		// which the Bot API accepts.
		if err := r.ParseMultipartForm(1 << 20); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		for k, v := range r.MultipartForm.Value {
			out[k] = v[0]
		}
	default:
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
		for k, v := range r.Form {
			out[k] = v[0]
		}
	}
	return out, nil
}
