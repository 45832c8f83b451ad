package kv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	badger "github.com/dgraph-io/badger/v4"
	"golang.org/x/sys/unix"
)

// A backup is every live key of the store at one commit boundary, streamed while the
// store keeps serving:
//
//	"HGRBAK01\n"
//	records: [payload length u32][crc32c of payload u32][payload]
//	         payload = uvarint key length (> 0), key, uvarint expiresAt, value
//	trailer: a record whose payload is uvarint 0, then uvarint record count and
//	         the crc32c of every record's payload chained (u32)
//
// It is taken as a commit: the overlay is copied between two commits, together with
// the newest Badger version the applier has committed; Badger is then read at that
// version (compaction is held back from it) merged with the copy.
// So it holds every write acknowledged before it began and nothing half-done. It holds
// no file of the data directory besides the store's keys (no SSH host key, no
// password key) and none of the log's own bookkeeping.
const backupMagic = "HGRBAK01\n"

// BackupInfo describes a finished backup.
type BackupInfo struct {
	Keys  int
	Bytes int64
}

// Backup writes a consistent snapshot of the store to w.
func (s *DB) Backup(ctx context.Context, w io.Writer) (BackupInfo, error) {
	s.backupsMu.Lock()
	if s.backupsClosed {
		s.backupsMu.Unlock()
		return BackupInfo{}, ErrClosed
	}
	s.backups.Add(1)
	s.backupsMu.Unlock()
	defer s.backups.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.backupsStop, cancel)()
	var (
		snap []*walEntry
		ts   uint64
	)
	// The snapshot is a commit that writes nothing: it runs between two commits and
	// returns once everything it copied is durable.
	err := s.Update(func(*Txn) error {
		s.ovMu.RLock()
		snap = make([]*walEntry, 0, len(s.overlay))
		for _, e := range s.overlay {
			snap = append(snap, e)
		}
		s.holdMu.Lock()
		ts = s.appliedTs.Load()
		s.backupHold.Store(ts)
		s.holdMu.Unlock()
		s.ovMu.RUnlock()
		return nil
	})
	defer func() {
		s.holdMu.Lock()
		s.backupHold.Store(0)
		s.holdMu.Unlock()
	}()
	if err != nil {
		return BackupInfo{}, fmt.Errorf("store: backup snapshot: %w", err)
	}
	slices.SortFunc(snap, func(a, b *walEntry) int { return strings.Compare(a.key, b.key) })

	bw := bufio.NewWriterSize(w, 256<<10)
	info := BackupInfo{}
	if _, err := bw.WriteString(backupMagic); err != nil {
		return info, err
	}
	var chain uint32
	var buf []byte
	put := func(key, val []byte, expiresAt uint64) error {
		if strings.HasPrefix(string(key), prefixMetaWAL) {
			return nil
		}
		buf = buf[:0]
		buf = binary.AppendUvarint(buf, uint64(len(key)))
		buf = append(buf, key...)
		buf = binary.AppendUvarint(buf, expiresAt)
		buf = append(buf, val...)
		if err := writeBackupRecord(bw, buf); err != nil {
			return err
		}
		chain = crc32.Update(chain, crcTable, buf)
		info.Keys++
		return nil
	}

	txn := s.db.NewTransactionAt(ts, false)
	defer txn.Discard()
	it := txn.NewIterator(badger.DefaultIteratorOptions)
	defer it.Close()
	now := unixNow()
	oi := 0
	emitOverlay := func(e *walEntry) error {
		if !e.live(now) {
			return nil
		}
		return put([]byte(e.key), e.val, e.expiresAt)
	}
	for it.Rewind(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return info, err
		}
		item := it.Item()
		key := item.Key()
		for oi < len(snap) && snap[oi].key < string(key) {
			if err := emitOverlay(snap[oi]); err != nil {
				return info, err
			}
			oi++
		}
		if oi < len(snap) && snap[oi].key == string(key) {
			if err := emitOverlay(snap[oi]); err != nil {
				return info, err
			}
			oi++
			continue
		}
		if item.IsDeletedOrExpired() {
			continue
		}
		val, err := item.ValueCopy(nil)
		if err != nil {
			return info, err
		}
		if err := put(key, val, item.ExpiresAt()); err != nil {
			return info, err
		}
	}
	for ; oi < len(snap); oi++ {
		if err := ctx.Err(); err != nil {
			return info, err
		}
		if err := emitOverlay(snap[oi]); err != nil {
			return info, err
		}
	}
	trailer := binary.AppendUvarint(nil, 0)
	trailer = binary.AppendUvarint(trailer, uint64(info.Keys))
	trailer = binary.LittleEndian.AppendUint32(trailer, chain)
	if err := writeBackupRecord(bw, trailer); err != nil {
		return info, err
	}
	return info, bw.Flush()
}

func writeBackupRecord(w io.Writer, payload []byte) error {
	var head [8]byte
	binary.LittleEndian.PutUint32(head[:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(head[4:], crc32.Checksum(payload, crcTable))
	if _, err := w.Write(head[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// ErrNotEmpty is Restore refusing a directory that already holds something.
var ErrNotEmpty = errors.New("store: restore needs an empty or new data directory")

// ErrRestoreInterrupted is Open refusing a store whose restore did not finish.
var ErrRestoreInterrupted = errors.New("store: a restore into this directory was interrupted; run it again")

// restoringDir is where Restore builds the store before it takes dir's place.
func restoringDir(dir string) string { return filepath.Clean(dir) + ".restoring" }

// Restore loads a backup into dir, which must be empty or not exist. The store is built
// beside it and renamed into place once whole, so a backup that is cut short or
// damaged, or a restore that is killed, leaves no store in dir: refused, dir is as it
// was; killed, the half-built store stays beside dir, Open refuses dir until a restore
// finishes, and the next Restore starts over.
func Restore(dir string, r io.Reader) (BackupInfo, error) {
	return RestoreWith(dir, r, RestoreOptions{})
}

// RestoreOptions is what a restore does besides loading the backup's keys.
type RestoreOptions struct {
	// Check sees every key of the backup as it is read; an error refuses the restore
	// whole (nothing is kept).
	Check func(key, val []byte) error
	// Set is written into the restored store after the backup's keys (markers that the
	// next start acts on).
	Set map[string][]byte
}

// RestoreWith is Restore with opts.
func RestoreWith(dir string, r io.Reader, opts RestoreOptions) (BackupInfo, error) {
	var info BackupInfo
	// One restore into a directory at a time: a second one removed the first's
	// half-built store from under its open Badger and built its own in its place.
	unlock, err := lockRestore(dir)
	if err != nil {
		return info, err
	}
	defer unlock()
	if names, err := os.ReadDir(dir); err == nil && len(names) > 0 {
		return info, fmt.Errorf("%w: %s holds %d entries", ErrNotEmpty, dir, len(names))
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return info, err
	}
	tmp := restoringDir(dir)
	if err := os.RemoveAll(tmp); err != nil {
		return info, err
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return info, err
	}
	info, err = restoreInto(tmp, r, opts)
	if err == nil {
		// dir is empty or absent (checked above); Go renames no directory over one.
		if rerr := os.Remove(dir); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = rerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, dir)
	}
	if err == nil {
		syncDir(filepath.Dir(tmp))
	}
	if err != nil {
		os.RemoveAll(tmp)
		return info, fmt.Errorf("store: restore: %w (nothing was kept in %s)", err, dir)
	}
	return info, nil
}

// ErrRestoreRunning is Restore refusing a directory another restore is loading.
var ErrRestoreRunning = errors.New("store: another restore into this directory is running")

// lockRestore takes an exclusive lock on the directory that holds dir (and its
// .restoring beside it), for as long as the restore runs; a process that dies drops it.
func lockRestore(dir string) (unlock func(), err error) {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, err
	}
	f, err := os.Open(parent)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s is locked); wait for it, or stop it and run this one again", ErrRestoreRunning, parent)
		}
		return nil, fmt.Errorf("store: lock %s for the restore: %w", parent, err)
	}
	return func() { f.Close() }, nil
}

func restoreInto(dir string, r io.Reader, opts RestoreOptions) (BackupInfo, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	magic := make([]byte, len(backupMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != backupMagic {
		return BackupInfo{}, errors.New("not a hangar backup (bad magic)")
	}
	db, err := openBadger(Options{Dir: dir, SyncWrites: true})
	if err != nil {
		return BackupInfo{}, err
	}
	defer db.Close()
	wb := db.NewWriteBatchAt(1)
	defer wb.Cancel()
	info, err := readBackupRecords(br, func(key, val []byte, expiresAt uint64) error {
		if opts.Check != nil {
			if err := opts.Check(key, val); err != nil {
				return err
			}
		}
		return wb.SetEntry(&badger.Entry{Key: bytes.Clone(key), Value: bytes.Clone(val), ExpiresAt: expiresAt})
	})
	if err != nil {
		return info, err
	}
	if err := wb.Flush(); err != nil {
		return info, err
	}
	meta := map[string][]byte{metaWALFormat: {2}}
	for k, v := range opts.Set {
		if strings.HasPrefix(k, prefixMetaWAL) {
			return info, fmt.Errorf("restore: %q is the log's own key", k)
		}
		meta[k] = v
	}
	if err := writeMeta(db, 2, meta); err != nil {
		return info, err
	}
	return info, db.Sync()
}

// VerifyBackup reads a whole backup and checks it as Restore does (magic, every
// record's checksum, the trailer's count and chain, nothing after it), storing
// nothing: `hangar backup` checks the stream it saves, so a stream cut off after its
// 200 is not kept as a backup.
func VerifyBackup(r io.Reader) (BackupInfo, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	magic := make([]byte, len(backupMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != backupMagic {
		return BackupInfo{}, errors.New("not a hangar backup (bad magic)")
	}
	info, err := readBackupRecords(br, func([]byte, []byte, uint64) error { return nil })
	if err != nil {
		return info, err
	}
	if n, _ := io.Copy(io.Discard, br); n > 0 {
		return info, fmt.Errorf("%d bytes after the trailer: damaged", n)
	}
	return info, nil
}

// readBackupRecords reads the records after the magic up to and including the
// trailer, checking each, and gives every key to put.
func readBackupRecords(br *bufio.Reader, put func(key, val []byte, expiresAt uint64) error) (BackupInfo, error) {
	var info BackupInfo
	var chain uint32
	var head [8]byte
	for {
		if _, err := io.ReadFull(br, head[:]); err != nil {
			return info, fmt.Errorf("the backup is cut short after %d keys: %w", info.Keys, err)
		}
		n := binary.LittleEndian.Uint32(head[:])
		if n > 64<<20 {
			return info, fmt.Errorf("record %d claims %d bytes: damaged", info.Keys+1, n)
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(br, p); err != nil {
			return info, fmt.Errorf("the backup is cut short after %d keys: %w", info.Keys, err)
		}
		info.Bytes += int64(len(p)) + 8
		if crc32.Checksum(p, crcTable) != binary.LittleEndian.Uint32(head[4:]) {
			return info, fmt.Errorf("record %d fails its checksum: damaged", info.Keys+1)
		}
		klen, rest, ok := uvarint(p)
		if !ok {
			return info, fmt.Errorf("record %d: damaged", info.Keys+1)
		}
		if klen == 0 {
			count, rest, ok := uvarint(rest)
			if !ok || len(rest) != 4 {
				return info, errors.New("the trailer is damaged")
			}
			if count != uint64(info.Keys) || binary.LittleEndian.Uint32(rest) != chain {
				return info, fmt.Errorf("the trailer says %d keys, %d were read: damaged", count, info.Keys)
			}
			return info, nil
		}
		if klen > uint64(len(rest)) {
			return info, fmt.Errorf("record %d: damaged", info.Keys+1)
		}
		key := rest[:klen]
		expiresAt, val, ok := uvarint(rest[klen:])
		if !ok {
			return info, fmt.Errorf("record %d: damaged", info.Keys+1)
		}
		if err := put(key, val, expiresAt); err != nil {
			return info, err
		}
		chain = crc32.Update(chain, crcTable, p)
		info.Keys++
	}
}
