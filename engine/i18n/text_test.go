package i18n

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// Every message of both catalogues is compiled, so that no text a user is sent
// goes back through go-i18n's per-call matching and text/template.
func TestEveryMessageIsCompiled(t *testing.T) {
	c := MustNew(Korean, "KRW")
	for _, lang := range Supported {
		ids, err := MessageIDs(lang)
		if err != nil {
			t.Fatal(err)
		}
		p := c.For(lang)
		for _, id := range ids {
			if _, ok := p.texts[id]; !ok {
				t.Errorf("%s %s is not compiled", lang, id)
			}
		}
		if len(p.texts) != len(ids) {
			t.Errorf("%s: %d texts compiled from %d messages", lang, len(p.texts), len(ids))
		}
	}
}

type stringer struct{ s string }

func (s stringer) String() string { return "str:" + s.s }

// The compiled texts come out byte for byte as go-i18n renders them, for every
// message of both catalogues and every way T is given its values: none, each field
// as a string (HTML and template syntax included), an int, an int64, a nil, missing,
// named twice (the last wins), an odd trailing name, a name that is not a string,
// and values render leaves to go-i18n (a time, a Stringer, pointers, an error).
func TestCompiledTextsRenderAsGoI18n(t *testing.T) {
	n := 5
	now := time.Date(2026, 12, 1, 3, 4, 5, 0, time.UTC)
	var nilPtr *int
	for _, def := range Supported {
		c := MustNew(def, "USD")
		for _, lang := range Supported {
			p := c.For(lang)
			ids, err := MessageIDs(lang)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				fields := p.texts[id].fields
				all := func(v func(i int) any) []any {
					var kv []any
					for i, f := range fields {
						kv = append(kv, f, v(i))
					}
					return kv
				}
				cases := map[string][]any{
					"none":    nil,
					"strings": all(func(i int) any { return fmt.Sprintf("<b>v%d</b> & {{.ID}} 한국어", i) }),
					"ints":    all(func(i int) any { return -i * 1234567 }),
					"int64s":  all(func(i int) any { return int64(i) << 40 }),
					"nils":    all(func(int) any { return nil }),
					"empty":   all(func(int) any { return "" }),
					"mixed": all(func(i int) any {
						return []any{"s", 7, int64(-8), nil}[i%4]
					}),
					"twice": append(all(func(int) any { return "first" }), all(func(i int) any { return i })...),
					"odd":   append(all(func(int) any { return "x" }), "ID"),
					"keys":  append([]any{1, "one", nil, "nil"}, all(func(int) any { return "v" })...),
					"other": all(func(i int) any {
						return []any{now, stringer{"x"}, &n, nilPtr, errors.New("boom"), uint8(3), 1.5e22, true}[i%8]
					}),
				}
				if len(fields) > 1 {
					cases["half"] = all(func(int) any { return "h" })[:len(fields)]
				}
				for name, kv := range cases {
					got, want := p.T(id, kv...), p.localize(id, kv)
					if got != want {
						t.Errorf("default %s, %s %s with %s values:\n got %q\nwant %q", def, lang, id, name, got, want)
					}
				}
			}
		}
	}
}

// A printer of no catalogue (a zero Printer) still answers with the id.
func TestZeroPrinterAnswersTheID(t *testing.T) {
	if got := (Printer{}).T("Ready", "ID", 1); got != "Ready" {
		t.Errorf("zero printer: %q", got)
	}
}

// compileText keeps text and single fields only; anything else goes to go-i18n.
func TestCompileTextRefusesWhatItCannotRender(t *testing.T) {
	for _, src := range []string{"{{if .A}}x{{end}}", "{{.A.B}}", "{{.A | printf \"%d\"}}", "{{$x := .A}}", "{{.}}", "{{ .A", "{{index .A 1}}"} {
		if _, ok := compileText(src); ok {
			t.Errorf("%q was compiled", src)
		}
	}
	tx, ok := compileText("a {{- .A }} b {{.B -}}  c")
	if !ok {
		t.Fatal("trim markers not compiled")
	}
	if got, _ := tx.render([]any{"A", 1, "B", "2"}); got != "a1 b 2c" {
		t.Errorf("trimmed text = %q", got)
	}
}

func BenchmarkT(b *testing.B) {
	p := MustNew(Korean, "KRW").For(English)
	b.Run("fields", func(b *testing.B) {
		for b.Loop() {
			p.T("Ready", "Title", "t", "Plan", "nano", "Region", "ap-northeast", "IP", "192.0.2.1", "Password", "pw")
		}
	})
	b.Run("fields/go-i18n", func(b *testing.B) {
		kv := []any{"Title", "t", "Plan", "nano", "Region", "ap-northeast", "IP", "192.0.2.1", "Password", "pw"}
		for b.Loop() {
			p.localize("Ready", kv)
		}
	})
	b.Run("title", func(b *testing.B) {
		for b.Loop() {
			p.T("ReadyTitle", "ID", int64(12345))
		}
	})
	b.Run("title/go-i18n", func(b *testing.B) {
		kv := []any{"ID", int64(12345)}
		for b.Loop() {
			p.localize("ReadyTitle", kv)
		}
	})
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			p.T("SomethingWrong")
		}
	})
}
