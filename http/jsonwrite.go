package http

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
)

// The answers built here must stay byte-identical to what c.JSON (encoding/json,
// Fiber's default encoder) wrote before, because clients and tests compare bodies;
// jsonwrite_test.go checks that against json.Marshal.

// sendJSON answers body as c.JSON would. SetBody copies into the response's pooled
// buffer, so body may live on the caller's stack or be shared read-only bytes.
func sendJSON(c *fiber.Ctx, body []byte) error {
	c.Response().SetBody(body)
	c.Response().Header.SetContentType(fiber.MIMEApplicationJSON)
	return nil
}

// viewJSONBuf fits any valid slug (at most 200 bytes) that needs no escaping plus the
// longest total, so a view answer is built without touching the heap.
const viewJSONBuf = 256

// appendViewJSON appends json.Marshal(viewResponse{slug, views, counted}).
func appendViewJSON(dst []byte, slug string, views uint64, counted *bool) []byte {
	dst = append(dst, `{"slug":`...)
	dst = appendJSONString(dst, slug)
	dst = append(dst, `,"views":`...)
	dst = strconv.AppendUint(dst, views, 10)
	if counted != nil {
		if *counted {
			dst = append(dst, `,"counted":true`...)
		} else {
			dst = append(dst, `,"counted":false`...)
		}
	}
	return append(dst, '}')
}

// appendOrderCreatedJSON appends json.Marshal(fiber.Map{"order_id": id, "status":
// status}), POST /orders' answer (a map's keys are written sorted).
func appendOrderCreatedJSON(dst []byte, id int64, status string) []byte {
	dst = append(dst, `{"order_id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"status":`...)
	dst = appendJSONString(dst, status)
	return append(dst, '}')
}

// appendJSONString appends s quoted as encoding/json quotes it. Slugs are almost
// always plain text that encoding/json copies through unchanged; anything else
// (escapes, HTML-escaped <>&, U+2028/U+2029, invalid UTF-8) goes to json.Marshal
// itself rather than to a second copy of its escaping rules that could drift.
func appendJSONString(dst []byte, s string) []byte {
	if !jsonVerbatim(s) {
		q, err := json.Marshal(s)
		if err != nil { // cannot happen for a string; keep the answer well-formed anyway
			return append(dst, `""`...)
		}
		return append(dst, q...)
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// jsonVerbatim reports whether encoding/json writes every byte of s unchanged
// between the quotes.
func jsonVerbatim(s string) bool {
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b < 0x20 || b == '"' || b == '\\' || b == '<' || b == '>' || b == '&' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

// mustJSON encodes a fixed answer at start-up with the encoder c.JSON uses, so a
// precomputed body cannot differ from what c.JSON would have written.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
