// Package store owns every byte hangar keeps on disk: the keyspace (keys.go), one file
// per record kind with its typed methods, record codecs, sequences, and the ordered
// schema migrations run at Open (meta.go). It is the only package that imports
// Badger.
//
// Every write is a commit of the engine in store/internal/kv: a function run against
// a transaction (tx) whose reads see every commit before it, and which returns once the
// write-ahead log's fdatasync covers it. Readers outside commits (view) see only what
// is durable. A record kind needs nothing of the engine but update, updateNow, view
// and the tx methods (Get, Set, SetEntry, Delete, NewIterator, PutOwned, MarkBorn,
// MarkUncached); see kv's doc for what the engine promises.
package store
