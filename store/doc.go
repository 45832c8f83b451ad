// Package store owns every byte hangar keeps on disk. It is the only package that
// imports Badger: it declares the keyspace (keys.go), the record codecs, TTL entries,
// the conflict-retrying transaction helper, the group committer that folds many
// callers' writes into one durable commit, and the ordered schema migrations run at
// start. Callers get typed methods, one file per record kind.
package store
