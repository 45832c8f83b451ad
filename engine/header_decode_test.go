package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeUpdateSeeds are bodies on the edges of what encoding/json accepts and how it
// decodes into tgUpdate, for FuzzDecodeUpdate.
var decodeUpdateSeeds = []string{
	`{"update_id":1,"message":{"message_id":3,"date":5,"from":{"id":42,"first_name":"Ann","language_code":"en"},"chat":{"id":42,"type":"private"},"text":"\/start"}}`,
	`{"update_id":2,"callback_query":{"id":"q1","from":{"id":7},"message":{"message_id":1,"date":9,"chat":{"id":-100}},"data":"oc:0123456789abcdef"}}`,
	`{"update_id":5,"pre_checkout_query":{"id":"p","from":{"id":8,"language_code":"ko"},"currency":"XTR","total_amount":10,"invoice_payload":"hp:8:100:0123456789abcdef"}}`,
	`{"update_id":6,"message":{"date":1,"from":{"id":8},"chat":{"id":8},"successful_payment":{"currency":"XTR","total_amount":10,"invoice_payload":"hp","telegram_payment_charge_id":"c1","provider_payment_charge_id":""}}}`,
	`{"update_id":7,"edited_message":{"from":{"id":7},"chat":{"id":7},"text":"/help"},"message":{"text":"a"}}`,
	// Case, repeats, nulls.
	`{"UPDATE_ID":8,"Message":{"FROM":{"Id":4,"First_Name":"B"},"TEXT":"x","Chat":{"ID":3}}}`,
	`{"update_id":11,"MESSAGE":{"From":{"ID":4},"Text":"/plans"},"message":{"text":"/help"}}`,
	`{"update_id":1,"update_id":2,"message":{"from":{"id":1}},"message":null,"message":{"text":"t"}}`,
	`{"update_id":1,"update_id":null,"message":{"text":"a","text":null,"chat":{"id":4},"chat":null,"chat":{}}}`,
	`{"update_id":1,"message":{"from":{"id":1,"first_name":"a"},"from":{"language_code":"en"},"from":null}}`,
	`{"update_id":1,"message":null,"edited_message":{"from":null},"callback_query":null,"pre_checkout_query":null}`,
	`{"update_id":1,"callback_query":{"message":{"date":1},"message":null,"message":{"chat":{"id":2}}}}`,
	`{"update_id":1,"message":{"from":{"id":1}},"edited_message":{"from":{"id":2}},"callback_query":{"from":{"id":3}}}`,
	// Strings.
	`{"update_id":1,"message":{"text":"\u00e9\ud83d\ude00\ud83d\u0041\ude00\ud800\\\"\/\b\f\n\r\t\u0000"}}`,
	"{\"update_id\":1,\"message\":{\"text\":\"a\xffb\xc3\xe2\x82c\xed\xa0\x80\xef\xbf\xbd\xf4\x90\x80\x80\"}}",
	"{\"update_id\":1,\"message\":{\"text\":\"ok \xe2\x82\xac\",\"x\":\"\xff\"}}",
	`{"update_id":1,"message":{"text":"\ud83d\ud83d\ude00","from":{"first_name":"\udc00x"}}}`,
	`{"update_id":1,"message":{"text":"\u12"}}`, `{"update_id":1,"message":{"text":"\x"}}`, `{"update_id":1,"message":{"text":"\'"}}`,
	"{\"update_id\":1,\"message\":{\"text\":\"a\tb\"}}", `{"update_id":1,"message":{"text":"abc`,
	// Numbers.
	`{"update_id":-0}`, `{"update_id":9223372036854775807}`, `{"update_id":9223372036854775808}`,
	`{"update_id":-9223372036854775808}`, `{"update_id":-9223372036854775809}`, `{"update_id":123456789012345678}`,
	`{"update_id":1e2}`, `{"update_id":1.0}`, `{"update_id":1.5}`, `{"update_id":01}`, `{"update_id":-}`, `{"update_id":1.}`,
	`{"update_id":1,"x":[1e5,-0.5E-3,1E+2,0]}`, `{"update_id":1,"x":1e}`, `{"update_id":1,"x":.5}`, `{"update_id":+1}`,
	`{"update_id":1,"pre_checkout_query":{"total_amount":99999999999999999999}}`,
	// Types encoding/json refuses.
	`{"update_id":"1"}`, `{"update_id":true}`, `{"update_id":1,"message":"x"}`, `{"update_id":1,"message":[]}`,
	`{"update_id":1,"message":{"chat":5}}`, `{"update_id":1,"message":{"text":{}}}`, `{"update_id":1,"message":{"from":{"id":"7"}}}`,
	`{"update_id":1,"message":{"chat":[]},"callback_query":{"from":{"id":1}}}`,
	// Names encoding/json matches by Unicode case folding, and escaped names.
	"{\"update_id\":1,\"callbac\xe2\x84\xaa_query\":{\"id\":\"k\"}}", `{"update_id":1,"callbac\u212a_query":{"id":"k"}}`,
	"{\"update_id\":1,\"me\xc5\xbfsage\":{\"text\":\"s\"}}", `{"update_\u0069d":3}`, `{"update_id":1,"message":{"te\u0078t":"x"}}`,
	"{\"update_id\":1,\"\xff\":1}", `{"update_id":1,"":{"":[]}}`,
	// Syntax and shape.
	``, ` `, `null`, `[]`, `{}`, `1`, `"x"`, `{`, `}`, `{"update_id":1}x`, `{"update_id":1} {}`, " \t\r\n{\"update_id\":1}\n ",
	"\ufeff{\"update_id\":1}", `{"update_id":1,}`, `{,"update_id":1}`, `{"update_id" 1}`, `{"update_id":1 "a":2}`,
	`{"update_id":1,"x":[1,]}`, `{"update_id":1,"x":[,1]}`, `{"update_id":1,"x":{"a":1,}}`, `{"update_id":1,"x":tru}`,
	`{"update_id":1,"x":nul}`, `{"update_id":1,"message":nul}`, `{"update_id":1,"x":[true,false,null,{},[],"",{"a":[{}]}]}`,
	`{'update_id':1}`, `{update_id:1}`, "{\"update_id\":1,\"x\":\"\x00\"}",
	`{"update_id":1,"x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`,
	`{"update_id":1,"x":` + strings.Repeat(`{"a":`, 400) + `1` + strings.Repeat("}", 400) + `}`,
	`{"update_id":1,"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
}

// FuzzDecodeUpdate holds decodeUpdate to encoding/json: whatever it decodes, encoding/json
// decodes without error into the same values; and ParseUpdateHeader says of every body
// what parseUpdateHeaderJSON (encoding/json alone) says, its error included.
func FuzzDecodeUpdate(f *testing.F) {
	for _, s := range decodeUpdateSeeds {
		f.Add([]byte(s))
	}
	f.Add(benchHelpUpdate)
	f.Add(benchCallbackUpdate)
	f.Fuzz(sameAsJSON)
}

// sameAsJSON is FuzzDecodeUpdate's check of one body.
func sameAsJSON(t *testing.T, raw []byte) {
	var want tgUpdate
	wantErr := json.Unmarshal(raw, &want)
	got, _, ok := decodeUpdate(raw)
	switch {
	case ok && wantErr != nil:
		t.Fatalf("%q: decoded %+v, encoding/json refuses it: %v", raw, got, wantErr)
	case ok && !reflect.DeepEqual(*got, want):
		t.Fatalf("%q: decoded\n%s\nencoding/json\n%s", raw, dumpUpdate(got), dumpUpdate(&want))
	case !ok && wantErr == nil && !leftToJSON(raw):
		t.Fatalf("%q: left to encoding/json, which decodes it:\n%s", raw, dumpUpdate(&want))
	}

	h, err := ParseUpdateHeader(raw)
	wh, werr := parseUpdateHeaderJSON(raw)
	if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
		t.Fatalf("%q: error %v, encoding/json's %v", raw, err, werr)
	}
	if err != nil {
		return
	}
	if h.ID != wh.ID || h.UserID != wh.UserID || h.PreCheckout != wh.PreCheckout {
		t.Fatalf("%q: header %+v, encoding/json's %+v", raw, h, wh)
	}
	if !reflect.DeepEqual(h.update, wh.update) {
		t.Fatalf("%q: update\n%s\nencoding/json's\n%s", raw, dumpUpdate(h.update), dumpUpdate(wh.update))
	}
}

// FuzzDecodeUpdateShapes is FuzzDecodeUpdate's check of bodies built to be mostly
// valid JSON, so that the fuzzer spends its time on what decodeUpdate decodes: every
// member the bot reads and others, names in any case, repeated members, nulls, values
// of the wrong type now and then, strings with any bytes written raw or escaped (\u,
// surrogate pairs, lone surrogates), numbers at and past int64's edges. shape seeds
// the choices; the strings and the number are the fuzzer's.
func FuzzDecodeUpdateShapes(f *testing.F) {
	f.Add(uint64(1), uint64(0), int64(42), "Ann", "/help", "en")
	f.Add(uint64(7), uint64(3), int64(-100), "\xff\xfe", "\U0001F600 \u00e9", "\"\\/")
	f.Add(uint64(99), uint64(12345), int64(9223372036854775807), "", "\x00\x1f", "KK")
	f.Fuzz(func(t *testing.T, shape, shape2 uint64, n int64, s1, s2, s3 string) {
		g := &shapeGen{r: rand.New(rand.NewPCG(shape, shape2)), n: n, strs: [3]string{s1, s2, s3}}
		g.object(updateShape, 0)
		sameAsJSON(t, g.b)
	})
}

// A shape is an object's members the bot reads, by kind.
type shape map[string]any

// Member kinds: "int" and "str" are leaves; a shape is an object (pointer or not).
var (
	userShape    = shape{"id": "int", "first_name": "str", "language_code": "str"}
	chatShape    = shape{"id": "int"}
	paymentShape = shape{"currency": "str", "total_amount": "int", "invoice_payload": "str", "telegram_payment_charge_id": "str"}
	messageShape = shape{"from": userShape, "chat": chatShape, "text": "str", "successful_payment": paymentShape}
	updateShape  = shape{
		"update_id":          "int",
		"message":            messageShape,
		"edited_message":     messageShape,
		"callback_query":     shape{"id": "str", "from": userShape, "message": shape{"date": "int", "chat": chatShape}, "data": "str"},
		"pre_checkout_query": shape{"id": "str", "from": userShape, "currency": "str", "total_amount": "int", "invoice_payload": "str"},
	}
)

type shapeGen struct {
	r    *rand.Rand
	n    int64
	strs [3]string
	b    []byte
}

func (g *shapeGen) object(sh shape, depth int) {
	names := make([]string, 0, len(sh)+2)
	for name := range sh {
		names = append(names, name)
	}
	slices.Sort(names)
	names = append(names, "message_id", "entities")
	g.b = append(g.b, '{')
	for i := range g.r.IntN(len(names) + 3) {
		if i > 0 {
			g.b = append(g.b, ',')
		}
		g.space()
		name := names[g.r.IntN(len(names))]
		g.str(g.caseOf(name), g.r.IntN(30) == 0)
		g.space()
		g.b = append(g.b, ':')
		g.space()
		g.value(sh[name], depth+1)
		g.space()
	}
	g.b = append(g.b, '}')
}

func (g *shapeGen) value(kind any, depth int) {
	if kind == nil || g.r.IntN(40) == 0 || depth > 5 { // another member, or the wrong type
		kinds := []any{"int", "str", "null", "bool", "array", userShape, chatShape}
		if depth > 5 {
			kinds = kinds[:4]
		}
		kind = kinds[g.r.IntN(len(kinds))]
	}
	if k, ok := kind.(shape); ok {
		g.object(k, depth)
		return
	}
	switch kind {
	case "int":
		if g.r.IntN(8) != 0 {
			g.b = append(g.b, []string{
				strconv.FormatInt(g.n, 10), strconv.FormatInt(int64(g.r.Uint64()), 10), strconv.FormatInt(g.n>>g.r.IntN(64), 10),
				"-0", "0", "123456789012345678", "1234567890123456789", "-9223372036854775808",
			}[g.r.IntN(8)]...)
			break
		}
		g.b = append(g.b, []string{"1e2", "1.0", "-1.5E-3", "9223372036854775808", "-9223372036854775809", "00", "1.", "-"}[g.r.IntN(8)]...)
	case "str":
		g.str(g.strs[g.r.IntN(3)], g.r.IntN(2) == 0)
	case "null":
		if g.r.IntN(32) == 0 {
			g.b = append(g.b, []string{"nul", "Null"}[g.r.IntN(2)]...)
			break
		}
		g.b = append(g.b, "null"...)
	case "bool":
		g.b = append(g.b, []string{"true", "false"}[g.r.IntN(2)]...)
	case "array":
		g.b = append(g.b, '[')
		g.value(nil, depth+1)
		g.b = append(g.b, ',')
		g.value("str", depth+1)
		g.b = append(g.b, ']')
	}
}

// caseOf is name with the case of its letters changed at random, or now and then
// another name.
func (g *shapeGen) caseOf(name string) string {
	switch g.r.IntN(40) {
	case 0:
		return g.strs[g.r.IntN(3)]
	case 1:
		return strings.Replace(name, "k", "\u212a", 1) // the Kelvin sign, which folds to k
	}
	b := []byte(name)
	for i, c := range b {
		if 'a' <= c && c <= 'z' && g.r.IntN(4) == 0 {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}

// str appends s quoted: its bytes as they are, or escaped (some as \u escapes, an
// astral rune as a surrogate pair, now and then a lone surrogate).
func (g *shapeGen) str(s string, escape bool) {
	g.b = append(g.b, '"')
	if !escape {
		g.b = append(g.b, s...)
		g.b = append(g.b, '"')
		return
	}
	for _, r := range s {
		switch {
		case g.r.IntN(30) == 0:
			g.b = fmt.Appendf(g.b, "\\u%04x", 0xd800+g.r.IntN(0x800))
		case r == '"' || r == '\\':
			g.b = append(g.b, '\\', byte(r))
		case r == utf8.RuneError || r < ' ' || g.r.IntN(3) == 0:
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				g.b = fmt.Appendf(g.b, "\\u%04x\\u%04X", r1, r2)
			} else {
				g.b = fmt.Appendf(g.b, "\\u%04x", r)
			}
		default:
			g.b = utf8.AppendRune(g.b, r)
		}
	}
	g.b = append(g.b, '"')
}

func (g *shapeGen) space() {
	if g.r.IntN(8) == 0 {
		g.b = append(g.b, " \t\r\n"[g.r.IntN(4)])
	}
}

// leftToJSON reports whether raw has what decodeUpdate may leave to encoding/json even
// when that decodes it: not an object, a backslash or a byte outside ASCII (in a
// member name), or deep nesting.
func leftToJSON(raw []byte) bool {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' || bytes.IndexByte(raw, '\\') >= 0 {
		return true
	}
	depth := 0
	for _, c := range raw {
		switch {
		case c >= 0x80:
			return true
		case c == '{' || c == '[':
			depth++
		}
	}
	return depth > maxSkipDepth-10
}

func dumpUpdate(u *tgUpdate) string {
	b, _ := json.MarshalIndent(u, "", "  ")
	return string(b)
}

// Telegram's bodies take the fast path: escaped slashes and emoji, unknown members of
// every kind, each update type the bot reads.
func TestDecodeUpdateTakesTelegramBodies(t *testing.T) {
	for _, raw := range []string{
		string(benchHelpUpdate),
		string(benchCallbackUpdate),
		`{"update_id":734918207,"message":{"message_id":18344,"from":{"id":5123456789,"is_bot":false,"first_name":"\u0410\u043d\u043d\u0430 \ud83d\ude80","language_code":"ru","is_premium":true},"chat":{"id":5123456789,"type":"private"},"date":1764560002,"text":"\u043f\u0440\u0438\u0432\u0435\u0442 \ud83d\udc4b","link_preview_options":{"is_disabled":true}}}`,
		`{"update_id":734918208,"pre_checkout_query":{"id":"1234567890123456789","from":{"id":5123456789,"is_bot":false,"first_name":"Ann","language_code":"en"},"currency":"XTR","total_amount":250,"invoice_payload":"hp:5123456789:250:0123456789abcdef"}}`,
		`{"update_id":734918209,"message":{"message_id":18345,"from":{"id":5123456789,"is_bot":false,"first_name":"Ann"},"chat":{"id":5123456789,"type":"private"},"date":1764560003,"successful_payment":{"currency":"XTR","total_amount":250,"invoice_payload":"hp:5123456789:250:0123456789abcdef","telegram_payment_charge_id":"stxAbCdEf","provider_payment_charge_id":""}}}`,
		`{"update_id":734918210,"edited_message":{"message_id":18346,"from":{"id":5123456789,"is_bot":false,"first_name":"Ann"},"chat":{"id":5123456789,"type":"private"},"date":1764560004,"edit_date":1764560005,"text":"\/plans"}}`,
		`{"update_id":734918211,"callback_query":{"id":"2200473541856251628","from":{"id":5123456789,"is_bot":false,"first_name":"Ann"},"message":{"message_id":18300,"chat":{"id":5123456789,"type":"private"},"date":0},"chat_instance":"-3761024789514620011","data":"ox:x"}}`,
		`{"update_id":734918212,"my_chat_member":{"chat":{"id":5123456789,"type":"private"},"from":{"id":5123456789,"is_bot":false,"first_name":"Ann"},"date":1764560006,"old_chat_member":{"user":{"id":7012345678,"is_bot":true,"first_name":"Hangar"},"status":"member"},"new_chat_member":{"user":{"id":7012345678,"is_bot":true,"first_name":"Hangar"},"status":"kicked","until_date":0}}}`,
	} {
		got, _, ok := decodeUpdate([]byte(raw))
		if !ok {
			t.Fatalf("%s: left to encoding/json", raw)
		}
		var want tgUpdate
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("%s: decoded\n%s\nencoding/json\n%s", raw, dumpUpdate(got), dumpUpdate(&want))
		}
	}
}

// The webhook's request buffer is reused once the handler returns, which may be before
// the actor is done with the update (an update that timed out): the header keeps its
// own copy of the body, and the update read from it, whatever the caller writes over raw.
func TestUpdateHeaderOwnsItsBody(t *testing.T) {
	const body = `{"update_id":734918201,"message":{"message_id":18340,"from":{"id":5123456789,"is_bot":false,"first_name":"Ann","language_code":"ko"},"chat":{"id":5123456789,"type":"private"},"date":1764560000,"text":"/plans"}}`
	raw := []byte(body)
	h, err := ParseUpdateHeader(raw)
	if err != nil {
		t.Fatal(err)
	}
	if h.body == nil {
		t.Fatal("decoded without the decoder: no body kept")
	}
	for i := range raw {
		raw[i] = 'x'
	}
	if string(h.body) != body {
		t.Fatalf("the header's body changed with the caller's buffer: %q", h.body)
	}
	if m := h.update.Message; m == nil || m.Text != "/plans" || m.From.FirstName != "Ann" || m.From.LanguageCode != "ko" {
		t.Fatalf("the update changed with the caller's buffer: %+v", h.update.Message)
	}
}
