package kv

// The log's own bookkeeping lives under ReservedPrefix, written straight into Badger by
// the applier, never through a commit, and left out of backups. store/keys.go, which
// declares the keyspace, reserves it.
const (
	ReservedPrefix = "meta:wal_"
	metaWALApplied = ReservedPrefix + "applied" // segment u64 BE, offset u64 BE: Badger holds the log up to here
	metaWALFormat  = ReservedPrefix + "format"  // present once the log was written framed (walformat.go)
	prefixMetaWAL  = ReservedPrefix
)
