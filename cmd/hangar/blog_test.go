package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/internal/usertext"
	"github.com/hangarhq/hangar/store"
)

func TestParseSeedViews(t *testing.T) {
	nfd := "\u1112\u1161\u11ab\u1100\u1173\u11af-\u1100\u1173\u11af" // 한글-글 decomposed
	cases := []struct {
		name, file string
		want       map[string]uint64
		errHas     []string // refused when set
	}{
		{name: "the seed blog's slugs", file: `{"한글-글": 17, "Hello-World": 3, "2024/old": 0}`,
			want: map[string]uint64{"한글-글": 17, "Hello-World": 3, "2024/old": 0}},
		{name: "two spellings add up", file: `{"한글-글": 17, "` + nfd + `": 4}`, want: map[string]uint64{"한글-글": 21}},
		{name: "escaped in JSON", file: `{"\ud55c\uae00": 2}`, want: map[string]uint64{"한글": 2}},
		{name: "empty object", file: `{}`, want: map[string]uint64{}},
		{name: "every bad slug named", file: `{"ok": 1, "../etc": 2, "a\u202eb": 3, "": 4}`,
			errHas: []string{`"../etc"`, `"a\u202eb"`, `""`, "nothing was seeded", "the slug is empty"}},
		{name: "too long, with the bound", file: `{"` + strings.Repeat("글", store.MaxSlugLen/3+1) + `": 1}`, errHas: []string{"at most 200"}},
		{name: "a negative count", file: `{"a": -1}`, errHas: []string{"whole number"}},
		{name: "a fraction", file: `{"a": 1.5}`, errHas: []string{"whole number"}},
		{name: "a list", file: `["a"]`, errHas: []string{"JSON object"}},
		{name: "null", file: `null`, errHas: []string{"not null"}},
		{name: "not UTF-8", file: "{\"a\xff\": 1}", errHas: []string{"not UTF-8"}},
		{name: "spellings overflow", file: `{"한글-글": 18446744073709551615, "` + nfd + `": 1}`, errHas: []string{"add up"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseSeedViews([]byte(c.file))
			if c.errHas != nil {
				if err == nil {
					t.Fatalf("accepted: %v", got)
				}
				for _, s := range c.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				return
			}
			if err != nil || len(got) != len(c.want) {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
	// Past ten bad slugs the rest are counted, not listed.
	var b strings.Builder
	b.WriteString("{")
	for i := range 12 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"bad/` + strings.Repeat("/", i+1) + `": 1`)
	}
	b.WriteString("}")
	_, err := parseSeedViews([]byte(b.String()))
	if err == nil || !errors.Is(err, usertext.ErrInvalidSlug) || !strings.Contains(err.Error(), "and 2 more") {
		t.Fatalf("twelve bad slugs: %v", err)
	}
}

func FuzzParseSeedViews(f *testing.F) {
	for _, s := range []string{`{"한글-글": 17, "Hello-World": 3}`, `{"../x": 1}`, `{}`, `null`, `[]`, `{"a": -1}`, `{"a\u202e": 1}`, "{\"\xff\": 1}", `{"a": 18446744073709551615, "a": 1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		counts, err := parseSeedViews(b)
		if err != nil {
			return
		}
		for slug := range counts {
			if err := store.ValidateSlug(slug); err != nil {
				t.Fatalf("parsed slug %q the store refuses: %v", slug, err)
			}
		}
	})
}
