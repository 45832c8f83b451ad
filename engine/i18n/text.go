package i18n

import (
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
)

// text is a message compiled once at New: go-i18n matched the language, built a map
// of the fields and ran text/template (reflection, a buffer and a copy) for every
// message sent, a twentieth of an order's CPU. Every message in the catalogues is
// literal text with {{.Field}} references, so it renders by concatenation instead.
type text struct {
	// lits[i] comes before fields[i]; the last one follows the last field.
	lits   []string
	fields []string
	size   int // of the literal parts
}

// compileTexts compiles the messages that are plain text and fields. The others, if
// a catalogue ever has one, are left to go-i18n. Only the "other" form is compiled:
// T passes no plural count, so go-i18n never picks another.
func compileTexts(msgs []*goi18n.Message) map[string]text {
	out := make(map[string]text, len(msgs))
	for _, m := range msgs {
		if m.Other == "" || m.LeftDelim != "" || m.RightDelim != "" {
			continue
		}
		if t, ok := compileText(m.Other); ok {
			out[m.ID] = t
		}
	}
	return out
}

// compileText parses src as go-i18n's text parser does (default delimiters) and
// keeps it if its nodes are only text and single-field actions.
func compileText(src string) (text, bool) {
	tmpl, err := template.New("").Option("missingkey=default").Parse(src)
	if err != nil || tmpl.Tree == nil {
		return text{}, false
	}
	t := text{lits: []string{""}}
	for _, n := range tmpl.Tree.Root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			t.lits[len(t.lits)-1] += string(n.Text)
			t.size += len(n.Text)
		case *parse.ActionNode:
			field, ok := singleField(n.Pipe)
			if !ok {
				return text{}, false
			}
			t.fields = append(t.fields, field)
			t.lits = append(t.lits, "")
		default:
			return text{}, false
		}
	}
	return t, true
}

// singleField is the name of {{.Name}}, the one action the catalogues use.
func singleField(p *parse.PipeNode) (string, bool) {
	if p == nil || len(p.Decl) != 0 || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return "", false
	}
	f, ok := p.Cmds[0].Args[0].(*parse.FieldNode)
	if !ok || len(f.Ident) != 1 {
		return "", false
	}
	return f.Ident[0], true
}

// noValue is what text/template prints for a field missing from the data.
const noValue = "<no value>"

// render fills t in with the name, value pairs of kv, as text/template would print
// them from T's map (the last pair of a name wins). ok is false for a value of a kind
// it does not print itself, which the caller hands to go-i18n.
func (t text) render(kv []any) (string, bool) {
	if len(t.fields) == 0 {
		return t.lits[0], true
	}
	var b strings.Builder
	b.Grow(t.size + 16*len(t.fields))
	var num [20]byte
	for i, f := range t.fields {
		b.WriteString(t.lits[i])
		switch v := lookup(kv, f).(type) {
		case string:
			b.WriteString(v)
		case int:
			b.Write(strconv.AppendInt(num[:0], int64(v), 10))
		case int64:
			b.Write(strconv.AppendInt(num[:0], v, 10))
		case nil:
			b.WriteString(noValue)
		default:
			return "", false
		}
	}
	b.WriteString(t.lits[len(t.fields)])
	return b.String(), true
}

// lookup is the value of the last pair named name in kv, or nil.
func lookup(kv []any, name string) any {
	for i := len(kv)&^1 - 2; i >= 0; i -= 2 {
		if k, ok := kv[i].(string); ok && k == name {
			return kv[i+1]
		}
	}
	return nil
}
