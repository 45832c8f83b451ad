package fakeapi

import (
	"cmp"
	"maps"
	"slices"
	"sync"
)

// Store holds a fake's instances by id, and the secret (root password) each was made
// with, by label, since that is how a test asks for it. Instances are values that never
// change once stored, so what Store hands out may be read without its lock.
type Store[K cmp.Ordered, I any] struct {
	id    func(I) K
	label func(I) string
	clone func(I) I
	// changed is Base.Notify once NewFake has the Store; it is called without mu held,
	// so a Wait condition may call back into the Store.
	changed func()

	mu      sync.Mutex
	seq     int
	held    map[K]I
	secrets map[string]string
}

// NewStore makes an empty Store. id and label read an instance's; clone copies one deep
// enough that a caller changing the copy cannot reach the stored instance (nil: a plain
// copy will do). Instances list in id order, so a provider whose ids grow with the
// sequence number lists oldest first.
func NewStore[K cmp.Ordered, I any](id func(I) K, label func(I) string, clone func(I) I) *Store[K, I] {
	if clone == nil {
		clone = func(in I) I { return in }
	}
	return &Store[K, I]{
		id: id, label: label, clone: clone, changed: func() {},
		held: map[K]I{}, secrets: map[string]string{},
	}
}

// Add stores what build makes of the next sequence number (1, 2, …) and keeps secret,
// unless empty, for the new instance's label. If clash holds for any instance already
// stored, Add stores nothing, uses up no number, and reports false: the check and the
// store are one step, so two creates cannot both pass it. build and clash run under the
// Store's lock and must not call it.
func (s *Store[K, I]) Add(secret string, clash func(held I) bool, build func(seq int) I) (I, bool) {
	s.mu.Lock()
	if clash != nil {
		for _, h := range s.held {
			if clash(h) {
				s.mu.Unlock()
				var zero I
				return zero, false
			}
		}
	}
	s.seq++
	in := s.clone(build(s.seq))
	s.held[s.id(in)] = in
	if secret != "" {
		s.secrets[s.label(in)] = secret
	}
	s.mu.Unlock()
	s.changed()
	return s.clone(in), true
}

// Lookup returns the instance with this id.
func (s *Store[K, I]) Lookup(id K) (I, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.held[id]
	return s.clone(in), ok
}

// Remove deletes the instance with this id and the secret kept for its label, and
// returns what it deleted.
func (s *Store[K, I]) Remove(id K) (I, bool) {
	s.mu.Lock()
	in, ok := s.held[id]
	if ok {
		delete(s.held, id)
		delete(s.secrets, s.label(in))
	}
	s.mu.Unlock()
	if ok {
		s.changed()
	}
	return in, ok
}

// Change replaces the instance with this id by what change makes of a copy of it, and
// reports whether it was there; change runs under the Store's lock and must not call it.
func (s *Store[K, I]) Change(id K, change func(I) I) bool {
	s.mu.Lock()
	in, ok := s.held[id]
	if ok {
		s.held[id] = s.clone(change(s.clone(in)))
	}
	s.mu.Unlock()
	if ok {
		s.changed()
	}
	return ok
}

// Select returns the instances match accepts (all, if match is nil), in id order.
func (s *Store[K, I]) Select(match func(I) bool) []I {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]I, 0, len(s.held))
	for _, id := range slices.Sorted(maps.Keys(s.held)) {
		if in := s.held[id]; match == nil || match(in) {
			out = append(out, s.clone(in))
		}
	}
	return out
}

// Count is how many instances the Store holds.
func (s *Store[K, I]) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held)
}

// Secret is the secret kept for this label: the last one added under it, while an
// instance added with it is still held.
func (s *Store[K, I]) Secret(label string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.secrets[label]
	return p, ok
}

// Window is the part of items from offset, at most size long. It is never nil, because
// a page past the end must still encode as an empty JSON array, not null.
func Window[T any](items []T, offset, size int) []T {
	if offset < 0 || offset >= len(items) || size < 1 {
		return []T{}
	}
	return items[offset:min(offset+size, len(items))]
}
