package fakeapi

import (
	"encoding/json"
	"net/http"
)

// Errors is how a provider words the answers the shared parts give on its behalf: to a
// missing or wrong token, to a path it does not serve, and to the statuses FailNext and
// RateLimitNext inject.
type Errors struct {
	// Write answers status with msg in the provider's error body.
	Write        func(w http.ResponseWriter, status int, msg string)
	Unauthorized string
	NotFound     string
	// Reasons words injected statuses. A 5xx it does not name gets ServerError; any
	// other status gets its HTTP text.
	Reasons     map[int]string
	ServerError string
}

// Reason is the message for an injected status.
func (e Errors) Reason(status int) string {
	if r, ok := e.Reasons[status]; ok {
		return r
	}
	if status >= 500 {
		return e.ServerError
	}
	return http.StatusText(status)
}

// Fail answers an injected status; it is what Front takes.
func (e Errors) Fail(w http.ResponseWriter, status int) { e.Write(w, status, e.Reason(status)) }

// WriteJSON answers status with v as JSON. The content type is exactly
// "application/json": govultr decodes nothing else.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
