package engine

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// UpdateHeader is what routing needs from a Telegram update, and the update itself,
// decoded once: the webhook (or the poller) decodes the body into the few fields the
// bot reads, which also validates the whole body as JSON, and the user's actor works
// on that decoded value instead of parsing the body a second time.
type UpdateHeader struct {
	ID     int64
	UserID int64 // 0 when the update has no sender (channel posts)
	// PreCheckout marks a pre_checkout_query, answered on the webhook's path.
	PreCheckout bool
	// update is the decoded update; nil for a header built by hand (a test), which the
	// actor decodes from the raw body.
	update *tgUpdate
	// body is a copy of the raw body the update's strings point into, read only; nil
	// unless decodeUpdate decoded it.
	body []byte
}

// The parts of a Telegram update (github.com/go-telegram/bot/models, same JSON names
// and types) the bot reads. Everything else in the body is skipped by the decoder.
type (
	tgUpdate struct {
		ID               int64               `json:"update_id"`
		Message          *tgMessage          `json:"message"`
		EditedMessage    *tgMessage          `json:"edited_message"`
		CallbackQuery    *tgCallbackQuery    `json:"callback_query"`
		PreCheckoutQuery *tgPreCheckoutQuery `json:"pre_checkout_query"`
	}
	tgUser struct {
		ID           int64  `json:"id"`
		FirstName    string `json:"first_name"`
		LanguageCode string `json:"language_code"`
	}
	tgChat struct {
		ID int64 `json:"id"`
	}
	tgMessage struct {
		From              *tgUser              `json:"from"`
		Chat              tgChat               `json:"chat"`
		Text              string               `json:"text"`
		SuccessfulPayment *tgSuccessfulPayment `json:"successful_payment"`
		// RefundedPayment is Telegram's notice of a refund it made itself; the same
		// fields as a successful payment's.
		RefundedPayment *tgSuccessfulPayment `json:"refunded_payment"`
	}
	// tgCallbackMessage is a callback query's message. Telegram sends date 0 for a
	// message the bot can no longer see (models.InaccessibleMessage): the bot then
	// answers in the user's private chat, as it did with models.MaybeInaccessibleMessage.
	tgCallbackMessage struct {
		Date int64  `json:"date"`
		Chat tgChat `json:"chat"`
	}
	tgCallbackQuery struct {
		ID      string             `json:"id"`
		From    *tgUser            `json:"from"`
		Message *tgCallbackMessage `json:"message"`
		Data    string             `json:"data"`
	}
	tgPreCheckoutQuery struct {
		ID             string  `json:"id"`
		From           *tgUser `json:"from"`
		Currency       string  `json:"currency"`
		TotalAmount    int     `json:"total_amount"`
		InvoicePayload string  `json:"invoice_payload"`
	}
	tgSuccessfulPayment struct {
		Currency                string `json:"currency"`
		TotalAmount             int    `json:"total_amount"`
		InvoicePayload          string `json:"invoice_payload"`
		TelegramPaymentChargeID string `json:"telegram_payment_charge_id"`
	}
)

// accessible is the chat of a callback query's message the bot can still see.
func (m *tgCallbackMessage) accessible() (tgChat, bool) {
	if m == nil || m.Date == 0 {
		return tgChat{}, false
	}
	return m.Chat, true
}

type fromOnly struct {
	From *struct {
		ID int64 `json:"id"`
	} `json:"from"`
}

type headerJSON struct {
	UpdateID      int64     `json:"update_id"`
	Message       *fromOnly `json:"message"`
	EditedMessage *fromOnly `json:"edited_message"`
	CallbackQuery *fromOnly `json:"callback_query"`
	PreCheckout   *fromOnly `json:"pre_checkout_query"`
}

// ParseUpdateHeader decodes an update once: its id, its sender, and the fields the bot
// reads.
//
// A body that is valid JSON but has a field the bot reads in a type it does not expect
// (message.text a number, say) is judged as before this decoder existed: only the
// routing fields decide whether it is refused, and the actor finds nothing to answer
// in it (as it did when the whole models.Update failed to decode).
//
// Nearly every body is decoded by decodeUpdate, which gives exactly what encoding/json
// gives when that succeeds; any body it does not take (malformed JSON, a type
// encoding/json refuses, or something it leaves to encoding/json) goes through
// parseUpdateHeaderJSON, which is what ParseUpdateHeader was before decodeUpdate.
func ParseUpdateHeader(raw []byte) (UpdateHeader, error) {
	if u, body, ok := decodeUpdate(raw); ok {
		h := headerOf(u)
		// The decoder's copy of the body is never written to: the actor reads it (and
		// the inbox copies it) instead of a second copy of the request's buffer.
		h.body = unsafe.Slice(unsafe.StringData(body), len(body))
		return h, nil
	}
	return parseUpdateHeaderJSON(raw)
}

// parseUpdateHeaderJSON is ParseUpdateHeader with encoding/json alone.
func parseUpdateHeaderJSON(raw []byte) (UpdateHeader, error) {
	u := new(tgUpdate)
	err := json.Unmarshal(raw, u)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return headerOf(u), nil
	case errors.As(err, &typeErr):
		h, err := parseRoutingHeader(raw)
		if err != nil {
			return UpdateHeader{}, err
		}
		h.update = &tgUpdate{ID: h.ID}
		if h.PreCheckout {
			// Answered on its own, as when only the query was decoded for the answer.
			var q struct {
				Query *tgPreCheckoutQuery `json:"pre_checkout_query"`
			}
			if json.Unmarshal(raw, &q) == nil {
				h.update.PreCheckoutQuery = q.Query
			}
		}
		return h, nil
	default:
		return UpdateHeader{}, err
	}
}

// headerOf is the routing header of a decoded update: the first sender found, in the
// order parseRoutingHeader looks.
func headerOf(u *tgUpdate) UpdateHeader {
	h := UpdateHeader{ID: u.ID, PreCheckout: u.PreCheckoutQuery != nil, update: u}
	switch {
	case u.Message != nil && u.Message.From != nil:
		h.UserID = u.Message.From.ID
	case u.EditedMessage != nil && u.EditedMessage.From != nil:
		h.UserID = u.EditedMessage.From.ID
	case u.CallbackQuery != nil && u.CallbackQuery.From != nil:
		h.UserID = u.CallbackQuery.From.ID
	case u.PreCheckoutQuery != nil && u.PreCheckoutQuery.From != nil:
		h.UserID = u.PreCheckoutQuery.From.ID
	}
	return h
}

// from is the query's sender; a query without one is from user 0 (as models.User's
// zero value was).
func (q *tgCallbackQuery) from() *tgUser {
	if q.From == nil {
		return &tgUser{}
	}
	return q.From
}

// parseRoutingHeader decodes only an update's id and sender.
func parseRoutingHeader(raw []byte) (UpdateHeader, error) {
	var h headerJSON
	if err := json.Unmarshal(raw, &h); err != nil {
		return UpdateHeader{}, err
	}
	out := UpdateHeader{ID: h.UpdateID, PreCheckout: h.PreCheckout != nil}
	for _, f := range []*fromOnly{h.Message, h.EditedMessage, h.CallbackQuery, h.PreCheckout} {
		if f != nil && f.From != nil {
			out.UserID = f.From.ID
			break
		}
	}
	return out, nil
}

// decodedUpdate is the update a header carries, or raw decoded now (a header built by
// hand, an inbox entry re-delivered after a restart). A body that no longer decodes
// gives an empty update: there is nothing to answer in it.
func decodedUpdate(h UpdateHeader, raw []byte) *tgUpdate {
	if h.update != nil {
		return h.update
	}
	if parsed, err := ParseUpdateHeader(raw); err == nil && parsed.update != nil {
		return parsed.update
	}
	return &tgUpdate{}
}

// decodeUpdate decodes raw exactly as json.Unmarshal(raw, new(tgUpdate)) does when
// that succeeds, without reflection: members matched to the fields by name without
// regard to ASCII case, the last of a repeated member winning (an object decoded into
// what an earlier one left, null clearing a pointer and leaving anything else as it
// was), strings unescaped with invalid UTF-8 and lone surrogates replaced by U+FFFD,
// every other member skipped but checked, and nothing but white space after the
// object. ok is false for every body on which encoding/json fails (a syntax error or
// a value of the wrong type, which only parseUpdateHeaderJSON knows how to judge) and
// for the few it leaves to encoding/json although that may succeed: a body that is not
// an object, a member name of a decoded object with an escape or a byte outside ASCII
// (encoding/json matches "callbac\u212a_query", with a Kelvin sign, to callback_query),
// and values nested deeper than maxSkipDepth. FuzzDecodeUpdate holds it to
// encoding/json.
//
// The update's strings that need no unescaping are parts of one copy of raw (which the
// caller may reuse), so the update keeps that copy alive while it is; body is that copy.
func decodeUpdate(raw []byte) (u *tgUpdate, body string, ok bool) {
	d := updateDecoder{s: string(raw), blk: new(updateBlock)}
	d.space()
	if d.peek() != '{' {
		return nil, "", false
	}
	d.update(&d.blk.u)
	d.space()
	if d.bad || d.i != len(d.s) {
		return nil, "", false
	}
	return &d.blk.u, d.s, true
}

// maxSkipDepth is how deep decodeUpdate follows nested values (encoding/json's limit
// is 10000); a body nested deeper is left to encoding/json.
const maxSkipDepth = 512

// updateBlock holds an update and the parts one usually has, allocated together; a
// second part of the same type (an edited_message besides a message, a member
// repeated after a null) is allocated on its own.
type updateBlock struct {
	u                                 tgUpdate
	msg                               tgMessage
	user                              tgUser
	cq                                tgCallbackQuery
	cm                                tgCallbackMessage
	msgUsed, userUsed, cqUsed, cmUsed bool
}

type updateDecoder struct {
	s   string
	i   int  // the next byte of s to read
	bad bool // s is not what decodeUpdate decodes; i is then len(s)
	blk *updateBlock
}

func (d *updateDecoder) fail() {
	d.bad = true
	d.i = len(d.s)
}

func (d *updateDecoder) peek() byte {
	if d.i < len(d.s) {
		return d.s[d.i]
	}
	return 0
}

// space skips JSON's white space.
func (d *updateDecoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// begin consumes an object's '{' (the next byte) and reports whether a member follows.
func (d *updateDecoder) begin() bool {
	d.i++
	d.space()
	if d.peek() == '}' {
		d.i++
		return false
	}
	return !d.bad
}

// key reads a member's name of a decoded object, and the ':' and space after it. A
// name with an escape or a byte outside ASCII is left to encoding/json, as its
// case-insensitive match is then Unicode's.
func (d *updateDecoder) key() string {
	if d.peek() != '"' {
		d.fail()
		return ""
	}
	start := d.i + 1
	for j := start; j < len(d.s); j++ {
		switch c := d.s[j]; {
		case c == '"':
			k := d.s[start:j]
			d.i = j + 1
			d.space()
			if d.peek() != ':' {
				d.fail()
				return ""
			}
			d.i++
			d.space()
			return k
		case c == '\\' || c < ' ' || c >= utf8.RuneSelf:
			d.fail()
			return ""
		}
	}
	d.fail()
	return ""
}

// next consumes the ',' before an object's next member, or the '}' after its last,
// and reports whether a member follows.
func (d *updateDecoder) next() bool {
	d.space()
	switch d.peek() {
	case ',':
		d.i++
		d.space()
		return true
	case '}':
		d.i++
		return false
	}
	d.fail()
	return false
}

// is reports whether the member name k is name (lower case) as encoding/json matches
// an ASCII name: regardless of case.
func is(k, name string) bool {
	if len(k) != len(name) {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// null consumes a null value (the next byte is 'n').
func (d *updateDecoder) null() {
	if len(d.s)-d.i >= 4 && d.s[d.i:d.i+4] == "null" {
		d.i += 4
		return
	}
	d.fail()
}

// literal consumes lit (true, false or null).
func (d *updateDecoder) literal(lit string) {
	if len(d.s)-d.i >= len(lit) && d.s[d.i:d.i+len(lit)] == lit {
		d.i += len(lit)
		return
	}
	d.fail()
}

// object is the start of decoding a struct value: it reports whether the value is an
// object to decode; a null is consumed (and reported in null), anything else fails.
func (d *updateDecoder) object() (isObject, isNull bool) {
	switch d.peek() {
	case '{':
		return true, false
	case 'n':
		d.null()
		return false, !d.bad
	}
	d.fail() // a value of another type: encoding/json's UnmarshalTypeError
	return false, false
}

func (d *updateDecoder) update(u *tgUpdate) {
	for more := d.begin(); more; more = d.next() {
		switch k := d.key(); {
		case is(k, "update_id"):
			d.int64(&u.ID)
		case is(k, "message"):
			u.Message = d.message(u.Message)
		case is(k, "edited_message"):
			u.EditedMessage = d.message(u.EditedMessage)
		case is(k, "callback_query"):
			u.CallbackQuery = d.callbackQuery(u.CallbackQuery)
		case is(k, "pre_checkout_query"):
			u.PreCheckoutQuery = d.preCheckoutQuery(u.PreCheckoutQuery)
		default:
			d.skip(1)
		}
	}
}

// openMember starts decoding an object member whose current value is p (nil before
// the first): it returns nil for a JSON null, p with false for anything the decoder gave
// up on, and otherwise the value to decode into with true: p, or when p is nil the
// decoder's own slot on its first use (slot, used; nil for types without one), else a
// new value.
func openMember[T any](d *updateDecoder, p *T, slot *T, used *bool) (*T, bool) {
	if obj, null := d.object(); !obj {
		if null {
			return nil, false
		}
		return p, false
	}
	if p == nil {
		if slot != nil && !*used {
			p, *used = slot, true
		} else {
			p = new(T)
		}
	}
	return p, true
}

// message decodes a *tgMessage member whose current value is m (nil before the first).
func (d *updateDecoder) message(m *tgMessage) *tgMessage {
	m, ok := openMember(d, m, &d.blk.msg, &d.blk.msgUsed)
	if !ok {
		return m
	}
	for more := d.begin(); more; more = d.next() {
		switch k := d.key(); {
		case is(k, "from"):
			m.From = d.user(m.From)
		case is(k, "chat"):
			d.chat(&m.Chat)
		case is(k, "text"):
			d.string(&m.Text)
		case is(k, "successful_payment"):
			m.SuccessfulPayment = d.successfulPayment(m.SuccessfulPayment)
		case is(k, "refunded_payment"):
			m.RefundedPayment = d.successfulPayment(m.RefundedPayment)
		default:
			d.skip(2)
		}
	}
	return m
}

func (d *updateDecoder) user(p *tgUser) *tgUser {
	p, ok := openMember(d, p, &d.blk.user, &d.blk.userUsed)
	if !ok {
		return p
	}
	for more := d.begin(); more; more = d.next() {
		switch k := d.key(); {
		case is(k, "id"):
			d.int64(&p.ID)
		case is(k, "first_name"):
			d.string(&p.FirstName)
		case is(k, "language_code"):
			d.string(&p.LanguageCode)
		default:
			d.skip(3)
		}
	}
	return p
}

// chat decodes a tgChat member into c: a null leaves it as it is.
func (d *updateDecoder) chat(c *tgChat) {
	if obj, _ := d.object(); !obj {
		return
	}
	for more := d.begin(); more; more = d.next() {
		if is(d.key(), "id") {
			d.int64(&c.ID)
		} else {
			d.skip(3)
		}
	}
}

func (d *updateDecoder) callbackQuery(q *tgCallbackQuery) *tgCallbackQuery {
	q, ok := openMember(d, q, &d.blk.cq, &d.blk.cqUsed)
	if !ok {
		return q
	}
	for more := d.begin(); more; more = d.next() {
		switch k := d.key(); {
		case is(k, "id"):
			d.string(&q.ID)
		case is(k, "from"):
			q.From = d.user(q.From)
		case is(k, "message"):
			q.Message = d.callbackMessage(q.Message)
		case is(k, "data"):
			d.string(&q.Data)
		default:
			d.skip(2)
		}
	}
	return q
}

func (d *updateDecoder) callbackMessage(m *tgCallbackMessage) *tgCallbackMessage {
	m, ok := openMember(d, m, &d.blk.cm, &d.blk.cmUsed)
	if !ok {
		return m
	}
	for more := d.begin(); more; more = d.next() {
		switch k := d.key(); {
		case is(k, "date"):
			d.int64(&m.Date)
		case is(k, "chat"):
			d.chat(&m.Chat)
		default:
			d.skip(3)
		}
	}
	return m
}

func (d *updateDecoder) preCheckoutQuery(q *tgPreCheckoutQuery) *tgPreCheckoutQuery {
	q, ok := openMember(d, q, nil, nil)
	if !ok {
		return q
	}
	for more := d.begin(); more; more = d.next() {
		switch k := d.key(); {
		case is(k, "id"):
			d.string(&q.ID)
		case is(k, "from"):
			q.From = d.user(q.From)
		case is(k, "currency"):
			d.string(&q.Currency)
		case is(k, "total_amount"):
			d.int(&q.TotalAmount)
		case is(k, "invoice_payload"):
			d.string(&q.InvoicePayload)
		default:
			d.skip(2)
		}
	}
	return q
}

func (d *updateDecoder) successfulPayment(p *tgSuccessfulPayment) *tgSuccessfulPayment {
	p, ok := openMember(d, p, nil, nil)
	if !ok {
		return p
	}
	for more := d.begin(); more; more = d.next() {
		switch k := d.key(); {
		case is(k, "currency"):
			d.string(&p.Currency)
		case is(k, "total_amount"):
			d.int(&p.TotalAmount)
		case is(k, "invoice_payload"):
			d.string(&p.InvoicePayload)
		case is(k, "telegram_payment_charge_id"):
			d.string(&p.TelegramPaymentChargeID)
		default:
			d.skip(3)
		}
	}
	return p
}

// int64 decodes an integer member into p: a null leaves it as it is; a number that is
// not an integer or does not fit, or a value of another type, fails (encoding/json's
// UnmarshalTypeError).
func (d *updateDecoder) int64(p *int64) {
	switch c := d.peek(); {
	case c == 'n':
		d.null()
	case c == '-' || '0' <= c && c <= '9':
		start := d.i
		if !d.number() {
			d.fail()
			return
		}
		lit := d.s[start:d.i]
		digits := lit
		if lit[0] == '-' {
			digits = lit[1:]
		}
		if len(digits) > 18 { // may not fit: strconv decides, as for encoding/json
			n, err := strconv.ParseInt(lit, 10, 64)
			if err != nil {
				d.fail()
				return
			}
			*p = n
			return
		}
		var n int64
		for i := 0; i < len(digits); i++ {
			n = n*10 + int64(digits[i]-'0')
		}
		if len(digits) < len(lit) {
			n = -n
		}
		*p = n
	default:
		d.fail()
	}
}

// int is int64 for an int member.
func (d *updateDecoder) int(p *int) {
	n := int64(*p)
	d.int64(&n)
	if int64(int(n)) != n {
		d.fail()
		return
	}
	*p = int(n)
}

// number consumes a number (the next byte is '-' or a digit) as JSON spells it, and
// reports whether it is an integer: no fraction and no exponent.
func (d *updateDecoder) number() (integer bool) {
	s, i := d.s, d.i
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i++
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		d.fail()
		return false
	}
	integer = true
	if i < len(s) && s[i] == '.' {
		integer = false
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			d.fail()
			return false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		integer = false
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			d.fail()
			return false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	d.i = i
	return integer
}

// string decodes a string member into p: a null leaves it as it is, a value of another
// type fails.
func (d *updateDecoder) string(p *string) {
	switch d.peek() {
	case '"':
		if v := d.quoted(); !d.bad {
			*p = v
		}
	case 'n':
		d.null()
	default:
		d.fail()
	}
}

// quoted reads a string (the next byte is '"'): a part of d.s when it has no escape
// and is valid UTF-8, or else a new string unescaped as encoding/json does.
func (d *updateDecoder) quoted() string {
	s := d.s
	start := d.i + 1
	for j := start; j < len(s); {
		switch c := s[j]; {
		case c == '"':
			d.i = j + 1
			return s[start:j]
		case c == '\\' || c < ' ':
			return d.unquote(start, j)
		case c < utf8.RuneSelf:
			j++
		default:
			r, n := utf8.DecodeRuneInString(s[j:])
			if r == utf8.RuneError && n == 1 {
				return d.unquote(start, j)
			}
			j += n
		}
	}
	d.fail()
	return ""
}

// unquote is quoted's decoding of the string from start, whose part before j needs no
// unescaping, with encoding/json's unquoteBytes rules: the escapes JSON has, a valid
// pair of \u surrogates decoded, a lone surrogate and each byte of invalid UTF-8 made
// U+FFFD.
func (d *updateDecoder) unquote(start, j int) string {
	s := d.s
	end := j // the closing quote, or len(s): the string's size for the builder
	for end < len(s) && s[end] != '"' {
		if s[end] == '\\' {
			end++
		}
		end++
	}
	var b strings.Builder
	b.Grow(min(end, len(s)) - start)
	b.WriteString(s[start:j])
	for j < len(s) {
		switch c := s[j]; {
		case c == '"':
			d.i = j + 1
			return b.String()
		case c < ' ':
			d.fail()
			return ""
		case c == '\\':
			if j+1 >= len(s) {
				d.fail()
				return ""
			}
			switch e := s[j+1]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r := hex4(s[j+2:])
				if r < 0 {
					d.fail()
					return ""
				}
				j += 6
				if utf16.IsSurrogate(r) {
					if len(s)-j >= 6 && s[j] == '\\' && s[j+1] == 'u' {
						if dec := utf16.DecodeRune(r, hex4(s[j+2:])); dec != unicode.ReplacementChar {
							j += 6
							b.WriteRune(dec)
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				b.WriteRune(r)
				continue
			default:
				d.fail()
				return ""
			}
			j += 2
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			j++
		default:
			r, n := utf8.DecodeRuneInString(s[j:])
			j += n
			b.WriteRune(r) // U+FFFD for each byte of invalid UTF-8
		}
	}
	d.fail()
	return ""
}

// hex4 is the value of the four hex digits s starts with, or -1.
func hex4(s string) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for i := range 4 {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// skip consumes and checks a value of no decoded field, at the given depth of nesting.
func (d *updateDecoder) skip(depth int) {
	if depth > maxSkipDepth {
		d.fail()
		return
	}
	switch c := d.peek(); {
	case c == '{':
		d.i++
		d.space()
		if d.peek() == '}' {
			d.i++
			return
		}
		for !d.bad {
			if d.peek() != '"' {
				d.fail()
				return
			}
			d.skipString()
			d.space()
			if d.peek() != ':' {
				d.fail()
				return
			}
			d.i++
			d.space()
			d.skip(depth + 1)
			if !d.next() {
				return
			}
		}
	case c == '[':
		d.i++
		d.space()
		if d.peek() == ']' {
			d.i++
			return
		}
		for !d.bad {
			d.skip(depth + 1)
			d.space()
			switch d.peek() {
			case ',':
				d.i++
				d.space()
			case ']':
				d.i++
				return
			default:
				d.fail()
			}
		}
	case c == '"':
		d.skipString()
	case c == 't':
		d.literal("true")
	case c == 'f':
		d.literal("false")
	case c == 'n':
		d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		d.number()
	default:
		d.fail()
	}
}

// skipString consumes and checks a string (the next byte is '"'): any byte but '"',
// '\\' and control characters, and JSON's escapes.
func (d *updateDecoder) skipString() {
	s := d.s
	for j := d.i + 1; j < len(s); {
		switch c := s[j]; {
		case c == '"':
			d.i = j + 1
			return
		case c < ' ':
			d.fail()
			return
		case c == '\\':
			if j+1 >= len(s) {
				d.fail()
				return
			}
			switch s[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if hex4(s[j+2:]) < 0 {
					d.fail()
					return
				}
				j += 6
			default:
				d.fail()
				return
			}
		default:
			j++
		}
	}
	d.fail()
}
