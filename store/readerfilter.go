package store

import (
	"encoding/binary"
	"time"
)

// The reader filter (Store.readers) answers "this reader record cannot exist" without
// a read. Most views come from a reader the day has not seen yet, and looking its
// record up searched Badger's memtables and levels for a key that is nowhere (a third
// of a view's commit). A reader key holds the IP hashed with its day's salt, so every
// key of a day is written during that day: internal/dayfilter's filters of the keys
// written each day since Open, and of those that existed at Open, cover all of them.

// readerDay is the filter's number for the UTC day of t, the day whose salt a reader
// record written at t is hashed with.
func readerDay(t time.Time) int64 { return t.Unix() / int64(24*time.Hour/time.Second) }

func readerFilterHash(hash []byte) uint64 { return binary.BigEndian.Uint64(hash) }

// loadReaders fills the filter with the reader records stored at Open.
func (s *Store) loadReaders() error {
	return s.readers.Load(func(add func(uint64)) error {
		return s.view(func(txn *tx) error {
			return scanKeys(txn, prefixReader, func(key []byte) {
				if hash := key[len(prefixReader):]; len(hash) >= 8 {
					add(readerFilterHash(hash))
				}
			})
		})
	})
}
