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
	prefixSeenUpdate = "seen:"      // seen:{updateID} → empty, TTL 24h: before schema 6, now prefixSeenBlock
	prefixSeenBlock  = "seenblk:"   // seenblk:{updateID / 1024:8 BE} → 128 bytes, a bit an update_id seen; TTL 24h after the newest (seen.go)
	prefixOutbox     = "outbox:"    // outbox:{seq:8 BE} → OutboxMessage waiting to be sent
	prefixOutlog     = "outlog:"    // outlog:{id % OutlogCap:8 BE} → OutboxMessage sent, logged or dropped (a ring)
	prefixSeq        = "seq:"       // seq:{name} → Badger sequence leases

	// provisioning (seed 002)
	prefixOrder       = "order:"     // order:{id:8 BE} → Order
	prefixOrderStatus = "ordstat:"   // ordstat:{status}:{id:8 BE} → empty: the dispatcher's index
	prefixOrderUser   = "orduser:"   // orduser:{telegramUser}:{id:8 BE} → empty: a user's orders
	prefixDeadLetter  = "dlq:"       // dlq:{id:8 BE} → empty: the dead-letter list (purge empties it)
	prefixBalance     = "balance:"   // balance:{userID} → Balance (keyed by telegram_user_id before schema 5)
	prefixLedger      = "ledger:"    // ledger:{userID}:{seq:8 BE} → LedgerEntry
	prefixOrderRate   = "orderrate:" // orderrate:{userID} → Window, TTL = window end
	// idem:{userID:8 BE}{sha256(Idempotency-Key)[:16]} → order id (8 BE), TTL IdempotencyTTL
	prefixIdempotency = "idem:"
	prefixQuote       = "quote:" // quote:{nonce} → Quote awaiting the user's confirm button, TTL 10m

	// blog (seed 004)
	prefixViews       = "views:"             // views:{slug} → total, 8 BE; bounded by MaxSlugs
	prefixViewsDay    = "viewsday:"          // viewsday:{YYYY-MM-DD} → views that day, 8 BE, TTL 400d
	prefixReader      = "reader:"            // reader:{day-salted iphash} → slugs counted in the last 30m; marks a unique visitor; TTL 25h
	prefixVisitor     = "visitor:"           // visitor:{seq mod VisitorCap:8 BE} → seq:8 BE + Visitor: a ring
	prefixUniqueCount = "uvcount:"           // uvcount:{YYYY-MM-DD} → unique visitors that day, 8 BE, TTL 400d
	prefixIPSalt      = prefixMeta + "salt:" // meta:salt:{YYYY-MM-DD} → 16 random bytes, TTL 48h
	prefixComment     = "comment:"           // comment:{id:8 BE} → commentRecord, capped at CommentCap
	prefixCommentSlug = "commentslug:"       // commentslug:{slug}\x00{id:8 BE} → empty: a slug's comments
	prefixBlogRate    = "blograte:"          // blograte:{iphash} → write window, TTL 1m
	prefixInquiry     = "inquiry:"           // inquiry:{seq:8 BE} → Inquiry, capped at InquiryCap
	prefixSlugBudget  = "slugbudget:"        // slugbudget:{day-salted hash of IPv4 or IPv6 /64} → new slugs created that day, 8 BE, TTL 25h

	// the simulated cloud provider
	prefixSimServer = "simsrv:" // simsrv:{seq:8 BE} → SimServer: the simulator's servers, deleted with them
	// root passwords and SSH keys (issue 14)
	prefixSealedPassword = "sealedpw:" // sealedpw:{orderID:8 BE} → SealedPassword, deleted once sent and past the /password window
	prefixSSHKey         = "sshkey:"   // sshkey:{telegramUser} → UserSSHKey: the public key servers are created with
	// broadcasts (issue 17)
	prefixTelegramUser  = "tguser:"    // tguser:{telegramUser:8 BE} → first seen, blocked at (8 BE unix ns each; 0: not blocked)
	prefixBroadcast     = "bcast:"     // bcast:{id:8 BE} → Broadcast, the newest BroadcastCap kept
	prefixBroadcastRcpt = "bcastrcpt:" // bcastrcpt:{id:8 BE}{chunk:8 BE} → up to recipientChunk user ids, 8 BE each; deleted when it ends
	// billing (issue 17)
	prefixRenewal = "renewal:" // renewal:{orderID:8 BE}{period:8 BE} → ledger seq: the period's renewal, written once
	// renewal_refund:{orderID:8 BE}{period:8 BE} → ledger seq: that renewal given back, once
	prefixRenewalRefund = "renewal_refund:"
	prefixOrderOp       = "ordop:" // ordop:{orderID:8 BE} → empty: orders with a provider operation queued (Billing.Op)
	// operations (issue 16)
	prefixAudit = "audit:" // audit:{seq:8 BE} → AuditEntry: every change made by a person, the newest AuditCap kept

	prefixOnce = "once:" // once:{updateID:8 BE} → empty, TTL 24h: an update's order change was made (OrderChange.Once)
	// Telegram Stars top-ups and the bot's languages (issue 17)
	prefixInvoice    = "invoice:"    // invoice:{nonce} → Invoice sent by /topup and not yet paid, TTL InvoiceTTL
	prefixPayment    = "payment:"    // payment:{telegram_payment_charge_id} → Payment: the key that makes a credit happen once
	prefixPaymentSeq = "paymentseq:" // paymentseq:{seq:8 BE} → charge id: payments in the order they were credited
	prefixLanguage   = "lang:"       // lang:{userID} → UserLanguage: /language choice and last client language_code
)

const (
	metaSchemaVersion = prefixMeta + "schema_version"
	// metaReconcileLast holds the reconciler's last findings (JSON), one record.
	metaReconcileLast = prefixMeta + "reconcile_last"
	// meta:wal_* (kv.ReservedPrefix) is the write-ahead log's own bookkeeping, written
	// by store/internal/kv straight into Badger; no record kind may use it.
	// metaTelegramOffset is long polling's getUpdates offset, 8 BE.
	metaTelegramOffset = prefixMeta + "tg_offset"
	// metaQueuePause is whether provisioning is paused, since when and by whom (QueuePause).
	metaQueuePause = prefixMeta + "queue_pause"
	// metaVaultSince is when the password vault first opened (RFC 3339): orders created
	// before it keep their derived passwords. In the store so that a restore, which
	// leaves the vault's directory out, keeps it.
	metaVaultSince = prefixMeta + "vault_since"
)

func rateLimitKey(userID int64) []byte {
	return intKey(prefixRateLimit, userID)
}

func inboxKey(updateID int64) []byte { return u64Key(prefixInbox, uint64(updateID)) }
func outlogKey(seq uint64) []byte    { return u64Key(prefixOutlog, seq) }
func seqKey(name string) []byte      { return []byte(prefixSeq + name) }

// u64Key appends n big-endian so that keys under one prefix iterate in numeric order.
// intKey is prefix and n in decimal, in one allocation: []byte(prefix) then AppendInt
// took two, and the balance, window and order-rate keys are built on every order and
// update.
func intKey(prefix string, n int64) []byte {
	return strconv.AppendInt(append(make([]byte, 0, len(prefix)+20), prefix...), n, 10)
}

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

func orderKey(id int64) []byte { return u64Key(prefixOrder, uint64(id)) }

func onceKey(updateID int64) []byte { return u64Key(prefixOnce, uint64(updateID)) }

func orderStatusPrefix(status string) string { return prefixOrderStatus + status + ":" }

func orderStatusKey(status string, id int64) []byte {
	return u64Key(orderStatusPrefix(status), uint64(id))
}

func orderUserPrefix(user int64) string {
	return prefixOrderUser + strconv.FormatInt(user, 10) + ":"
}

func orderUserKey(user, id int64) []byte { return u64Key(orderUserPrefix(user), uint64(id)) }

func deadLetterKey(id int64) []byte { return u64Key(prefixDeadLetter, uint64(id)) }

func balanceKey(user int64) []byte { return intKey(prefixBalance, user) }

func ledgerPrefix(user int64) string { return prefixLedger + strconv.FormatInt(user, 10) + ":" }

// ledgerKey is ledgerPrefix(user) and seq, built in one allocation: two entries of every
// order's ledger are written with it.
func ledgerKey(user int64, seq uint64) []byte {
	k := make([]byte, 0, len(prefixLedger)+20+1+8)
	k = append(strconv.AppendInt(append(k, prefixLedger...), user, 10), ':')
	return binary.BigEndian.AppendUint64(k, seq)
}

func orderRateKey(user int64) []byte { return intKey(prefixOrderRate, user) }

func quoteKey(nonce string) []byte { return []byte(prefixQuote + nonce) }

func invoiceKey(nonce string) []byte    { return []byte(prefixInvoice + nonce) }
func paymentKey(chargeID string) []byte { return []byte(prefixPayment + chargeID) }
func paymentSeqKey(seq uint64) []byte   { return u64Key(prefixPaymentSeq, seq) }
func languageKey(user int64) []byte     { return intKey(prefixLanguage, user) }
