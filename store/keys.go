package store

import (
	"encoding/binary"
	"strconv"
)

// Every key prefix lives here so that the keyspace can be read in one place and no
// two record kinds can collide.
const (
	prefixMeta       = "meta:"      // meta:{name} → schema version, seeded flags
	prefixRateLimit  = "ratelimit:" // ratelimit:{userID} → Window, TTL = window end (seed 000)
	prefixInbox      = "inbox:"     // inbox:{updateID:8 BE} → inboxRecord, deleted once processed
	prefixSeenUpdate = "seen:"      // seen:{updateID} → empty, TTL 24h: Telegram re-deliveries
	prefixOutbox     = "outbox:"    // outbox:{seq:8 BE} → OutboxMessage waiting to be sent
	prefixOutlog     = "outlog:"    // outlog:{seq:8 BE} → OutboxMessage sent or dropped (capped)
	prefixSeq        = "seq:"       // seq:{name} → Badger sequence leases
)

const (
	metaSchemaVersion = prefixMeta + "schema_version"
)

func rateLimitKey(userID int64) []byte {
	return strconv.AppendInt([]byte(prefixRateLimit), userID, 10)
}

func seenUpdateKey(updateID int64) []byte {
	return strconv.AppendInt([]byte(prefixSeenUpdate), updateID, 10)
}

func inboxKey(updateID int64) []byte { return u64Key(prefixInbox, uint64(updateID)) }
func outboxKey(seq uint64) []byte     { return u64Key(prefixOutbox, seq) }
func outlogKey(seq uint64) []byte     { return u64Key(prefixOutlog, seq) }
func seqKey(name string) []byte       { return []byte(prefixSeq + name) }

// u64Key appends n big-endian so that keys under one prefix iterate in numeric order.
func u64Key(prefix string, n uint64) []byte {
	k := make([]byte, len(prefix)+8)
	copy(k, prefix)
	binary.BigEndian.PutUint64(k[len(prefix):], n)
	return k
}

func u64FromKey(prefix string, key []byte) uint64 {
	if len(key) < len(prefix)+8 {
		return 0
	}
	return binary.BigEndian.Uint64(key[len(prefix):])
}
