// Package store owns every byte hangar keeps on disk. It is the only package that
// imports Badger.
//
// Commits (Store.update) run one at a time, reading through tx: their own
// writes, then the overlay of committed entries Badger does not have yet (or that are
// cached), then Badger. Its writes go into the overlay and the write-ahead log
// (wal.go), whose writer shares one fdatasync among every commit that arrived meanwhile
// and only then answers their callers. Readers outside commits (Store.view) see an
// entry only once that sync has covered it. The applier (apply.go) writes the log's commits
// into Badger behind it in large batches, the only writer Badger has; at start the log
// is replayed into Badger, so a crash loses nothing that was acknowledged.
//
// The keyspace is declared in keys.go, record codecs and typed methods live one file
// per record kind, sequences in seq.go, and the ordered schema migrations run at start
// in meta.go.
package store
