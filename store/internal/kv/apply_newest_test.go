package kv

import (
	"slices"
	"testing"
)

// newest writes one version a key of a batch: the newest the batch holds, whatever
// was written after the batch's end; a version replaced only by one still in flight
// is written, and a born key deleted within the batch reaches Badger not at all.
func TestNewestWritesOneVersionAKeyOfABatch(t *testing.T) {
	type version struct {
		key     string
		gen     uint64
		durable bool
		born    bool
		deleted bool
	}
	tests := []struct {
		name        string
		versions    []version // in log order; those with gen <= maxGen make the batch
		maxGen      uint64
		wantWritten []int // indexes into versions
		wantElided  []int
	}{
		{
			name:        "three versions in the batch",
			versions:    []version{{"k", 1, true, false, false}, {"k", 2, true, false, false}, {"k", 2, true, false, false}},
			maxGen:      2,
			wantWritten: []int{2},
		},
		{
			name: "three versions in the batch and one after it",
			versions: []version{{"k", 1, true, false, false}, {"k", 2, true, false, false}, {"k", 2, true, false, false},
				{"k", 3, true, false, false}},
			maxGen:      2,
			wantWritten: []int{2},
		},
		{
			name:        "replaced only by a version still in flight",
			versions:    []version{{"k", 1, true, false, false}, {"k", 2, false, false, false}},
			maxGen:      1,
			wantWritten: []int{0},
		},
		{
			name: "keys interleaved",
			versions: []version{{"a", 1, true, false, false}, {"b", 1, true, false, false}, {"a", 2, true, false, false},
				{"b", 3, true, false, false}},
			maxGen:      2,
			wantWritten: []int{1, 2},
		},
		{
			name:       "born and deleted in the batch",
			versions:   []version{{"k", 1, true, true, false}, {"k", 2, true, false, true}},
			maxGen:     2,
			wantElided: []int{1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &DB{overlay: map[string]*walEntry{}}
			var all, batch []*walEntry
			for _, v := range tc.versions {
				e := &walEntry{key: v.key, gen: v.gen, born: v.born, deleted: v.deleted}
				e.durable.Store(v.durable)
				// As publish links them.
				if p := s.overlay[e.key]; p != nil {
					e.prev.Store(p)
					p.next.Store(e)
				}
				s.overlay[e.key] = e
				all = append(all, e)
				if v.gen <= tc.maxGen {
					batch = append(batch, e)
				}
			}
			a := &applier{s: s, unwritten: map[string]struct{}{}}
			written, elided := a.newest(batch, tc.maxGen)
			pick := func(idx []int) []*walEntry {
				var out []*walEntry
				for _, i := range idx {
					out = append(out, all[i])
				}
				return out
			}
			if !slices.Equal(written, pick(tc.wantWritten)) {
				t.Errorf("written %v, want versions %v", keysOf(written), tc.wantWritten)
			}
			if !slices.Equal(elided, pick(tc.wantElided)) {
				t.Errorf("elided %v, want versions %v", keysOf(elided), tc.wantElided)
			}
			for _, e := range batch {
				if e.next.Load() != nil {
					t.Errorf("a %s entry of the batch still points at its successor", e.key)
				}
			}
		})
	}
}

func keysOf(es []*walEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.key
	}
	return out
}
