package fakeapi_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
)

type thing struct {
	ID      string
	Label   string
	Tags    []string
	Created time.Time
}

func newStore() *fakeapi.Store[string, thing] {
	return fakeapi.NewStore(
		func(in thing) string { return in.ID },
		func(in thing) string { return in.Label },
		func(in thing) thing { in.Tags = slices.Clone(in.Tags); return in },
	)
}

// build makes a thing whose id sorts by the sequence number, as the fakes' ids do.
func build(label string, tags ...string) func(seq int) thing {
	return func(seq int) thing { return thing{ID: fmt.Sprintf("t%03d", seq), Label: label, Tags: tags} }
}

func ids(things []thing) []string {
	out := []string{}
	for _, in := range things {
		out = append(out, in.ID)
	}
	return out
}

func TestStoreAdd(t *testing.T) {
	for _, tc := range []struct {
		name         string
		adds         []string // labels, added in order
		uniqueLabels bool
		want         []string // ids held afterwards
		refused      []string // labels refused
	}{
		{name: "numbers in order", adds: []string{"a", "b", "c"}, want: []string{"t001", "t002", "t003"}},
		{name: "labels may repeat without a clash check", adds: []string{"a", "a"}, want: []string{"t001", "t002"}},
		{name: "a clash stores nothing and uses no number", adds: []string{"a", "a", "b"}, uniqueLabels: true,
			want: []string{"t001", "t002"}, refused: []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore()
			var refused []string
			for _, label := range tc.adds {
				var clash func(thing) bool
				if tc.uniqueLabels {
					clash = func(held thing) bool { return held.Label == label }
				}
				if _, ok := s.Add("", clash, build(label)); !ok {
					refused = append(refused, label)
				}
			}
			if got := ids(s.Select(nil)); !slices.Equal(got, tc.want) {
				t.Errorf("held %v, want %v", got, tc.want)
			}
			if !slices.Equal(refused, tc.refused) {
				t.Errorf("refused %v, want %v", refused, tc.refused)
			}
			if s.Count() != len(tc.want) {
				t.Errorf("Count = %d, want %d", s.Count(), len(tc.want))
			}
		})
	}
}

func TestStoreSecrets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		do     func(s *fakeapi.Store[string, thing])
		want   string
		wantOK bool
	}{
		{name: "kept for the label", want: "pw1", wantOK: true,
			do: func(s *fakeapi.Store[string, thing]) { s.Add("pw1", nil, build("a")) }},
		{name: "an empty secret is none", wantOK: false,
			do: func(s *fakeapi.Store[string, thing]) { s.Add("", nil, build("a")) }},
		{name: "the last add under a label wins", want: "pw2", wantOK: true,
			do: func(s *fakeapi.Store[string, thing]) { s.Add("pw1", nil, build("a")); s.Add("pw2", nil, build("a")) }},
		{name: "a seed without one keeps the earlier", want: "pw1", wantOK: true,
			do: func(s *fakeapi.Store[string, thing]) { s.Add("pw1", nil, build("a")); s.Add("", nil, build("a")) }},
		{name: "dropped with its instance", wantOK: false,
			do: func(s *fakeapi.Store[string, thing]) { in, _ := s.Add("pw1", nil, build("a")); s.Remove(in.ID) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore()
			tc.do(s)
			if got, ok := s.Secret("a"); got != tc.want || ok != tc.wantOK {
				t.Errorf("Secret = %q, %v; want %q, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestStoreLookupRemoveSelect(t *testing.T) {
	s := newStore()
	a, _ := s.Add("", nil, build("a", "x"))
	s.Add("", nil, build("b", "x", "y"))
	s.Add("", nil, build("c"))

	if got, ok := s.Lookup(a.ID); !ok || got.Label != "a" {
		t.Errorf("Lookup(%s) = %+v, %v", a.ID, got, ok)
	}
	if _, ok := s.Lookup("nope"); ok {
		t.Error("Lookup found an id never added")
	}
	tagged := func(tag string) func(thing) bool { return func(in thing) bool { return slices.Contains(in.Tags, tag) } }
	for tag, want := range map[string][]string{"x": {"t001", "t002"}, "y": {"t002"}, "z": {}} {
		if got := ids(s.Select(tagged(tag))); !slices.Equal(got, want) {
			t.Errorf("Select(tag %s) = %v, want %v", tag, got, want)
		}
	}
	if got, ok := s.Remove(a.ID); !ok || got.ID != a.ID {
		t.Errorf("Remove = %+v, %v", got, ok)
	}
	if _, ok := s.Remove(a.ID); ok {
		t.Error("removed the same instance twice")
	}
	if got := ids(s.Select(nil)); !slices.Equal(got, []string{"t002", "t003"}) {
		t.Errorf("after Remove, held %v", got)
	}
}

// What the Store hands out is a copy: a caller changing it must not change what later
// callers, or the fake's answers, see.
func TestStoreHandsOutCopies(t *testing.T) {
	s := newStore()
	tags := []string{"x"}
	added, _ := s.Add("", nil, build("a", tags...))
	tags[0] = "changed by the builder's caller"
	added.Tags[0] = "changed via Add's result"
	looked, _ := s.Lookup(added.ID)
	looked.Tags[0] = "changed via Lookup"
	s.Select(nil)[0].Tags[0] = "changed via Select"

	if got, _ := s.Lookup(added.ID); got.Tags[0] != "x" {
		t.Errorf("stored tags became %q", got.Tags[0])
	}
}

func TestWindow(t *testing.T) {
	items := []int{1, 2, 3, 4, 5}
	for _, tc := range []struct {
		offset, size int
		want         []int
	}{
		{0, 2, []int{1, 2}},
		{2, 2, []int{3, 4}},
		{4, 2, []int{5}},
		{5, 2, []int{}},
		{9, 2, []int{}},
		{-1, 2, []int{}},
		{0, 0, []int{}},
		{0, 100, items},
	} {
		got := fakeapi.Window(items, tc.offset, tc.size)
		if got == nil || !slices.Equal(got, tc.want) {
			t.Errorf("Window(%d, %d) = %#v, want %v", tc.offset, tc.size, got, tc.want)
		}
	}
	if got := fakeapi.Window[int](nil, 0, 10); got == nil || len(got) != 0 {
		t.Errorf("Window of nothing = %#v, want an empty, non-nil slice", got)
	}
}
