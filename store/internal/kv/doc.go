// Package kv is hangar's commit engine: Badger with a write-ahead log in front of it.
//
// Why it exists: Badger makes a transaction durable by syncing once per transaction,
// and its commits serialise behind each other, so a durable acknowledgement per request
// costs a Badger commit and its msync each. kv runs commits one at a time in memory
// (Update, UpdateNow for a commit a client waits on), appends each to a log whose one
// writer shares a single fdatasync among every commit that arrived meanwhile, and only
// then answers their callers. An applier copies the log into Badger behind it in large
// batches, the only writer Badger has.
//
// What it promises:
//   - Durable before answered: Update returns nil only once the log's sync covered
//     the commit; a crash loses nothing that was answered (replay at Open).
//   - Nothing shown that a crash could take back: a commit reads every commit before
//     it; a View reads only what is durable.
//   - A failed write leaves no trace: a commit whose write or sync fails, and every
//     commit after it, is answered with an error and is visible nowhere; the log
//     continues in a fresh segment as soon as the disk works (wal.go).
//   - Damage is found, never skipped: checksummed frames, segment headers, and the
//     position Badger holds; anything but an unacknowledged torn tail stops Open with
//     a LogDamageError (walformat.go, walreplay.go); Repair is the explicit way past.
//   - A free-space floor: below Options.MinFreeBytes writes are refused with
//     ErrInsufficientStorage and taken again once space is back (space.go).
//   - Consistent online backups (Backup) and restores into empty directories.
//
// The record kinds, their keys and the schema live in package store, above it; the
// keys under ReservedPrefix are kv's own.
package kv
