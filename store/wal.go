package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The write-ahead log is what makes a commit durable. Badger is applied to behind it,
// in large batches, so an acknowledgement costs one small append and one fdatasync
// shared by every commit that arrived meanwhile, instead of a Badger commit (which
// serialises behind every earlier commit and msyncs its memtable).
//
// A segment is a file of records; a record is one commit:
//
//	[payload length u32][crc32c of payload u32][payload]
//	payload = uvarint entry count, then per entry:
//	          flags u8 (1 = delete), uvarint expiresAt (unix s, 0 = never),
//	          uvarint key length, key, uvarint value length, value
//
// A segment is deleted once every record in it has been applied to Badger (whose
// commits are themselves synced when SyncWrites is on). At start every remaining
// segment is replayed into Badger in order; a torn record at the end of the last
// segment is a commit that was never acknowledged and is cut off.

const (
	walDirName   = "wal"
	walHeaderLen = 8
	entryDelete  = 1
)

// preparePace spaces the chunks of a segment's zero fill (about 1.5 s for 64 MiB,
// while filling a segment takes the busiest benchmark over 10 s).
const preparePace = 15 * time.Millisecond

// Segment sizes; variables so that the crash test can make a run rotate often.
var (
	walSegmentLimit int64 = 64 << 20
	walPrepareAfter int64 = 1 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// walEntry is one key's new state; the same pointer sits in the overlay until the
// applier has written it to Badger.
type walEntry struct {
	key       string
	val       []byte
	expiresAt uint64
	deleted   bool
	// born says no version of key was ever written before this one (see tx.markBorn);
	// it lets the applier skip a delete of a key Badger never had. Not logged: a
	// replay writes every delete.
	born bool
	// durable is set once the log's sync covered this entry. Until then only commits
	// (which are ordered after it in the log) may read it; other readers see prev, the
	// entry it replaced in the overlay (nil: Badger's value), so nothing is shown that
	// a crash could take back. prev is dropped once durable.
	durable atomic.Bool
	prev    atomic.Pointer[walEntry]
}

// visible returns the newest version of e's key that a reader outside commits may see:
// e itself once durable, else the newest durable one it replaced; nil means Badger's.
func (e *walEntry) visible() *walEntry {
	for e != nil && !e.durable.Load() {
		p := e.prev.Load()
		if p == nil && e.durable.Load() {
			break // became durable (and dropped prev) meanwhile
		}
		e = p
	}
	return e
}

// markDurable is called by the log's writer once a sync covered entries, before their
// callers hear of it.
func markDurable(entries []*walEntry) {
	for _, e := range entries {
		e.durable.Store(true)
		e.prev.Store(nil)
	}
}

// walGen is the set of commits one fdatasync covers; each waiter hears its result.
type walGen struct {
	waiters []chan<- error
}

func (g *walGen) finish(err error) {
	for _, w := range g.waiters {
		w <- err
	}
}

// applyBatch is what the writer hands the applier: entries made durable by one sync,
// or (closed > 0) the news that segment closed holds nothing newer.
type applyBatch struct {
	entries []*walEntry
	closed  uint64
}

// wal appends commits to the current segment. Commits are encoded into buf under mu
// by publish; the writer goroutine swaps buf out, writes and syncs it, and wakes the
// commits' callers.
type wal struct {
	dir     string
	sync    bool
	mu      sync.Mutex
	buf     []byte
	pending []*walEntry
	cur     *walGen
	failed  error // sticky: after a failed write nothing more is acknowledged
	closing bool
	kick    chan struct{}
	done    chan struct{}

	stats *logCounters
	// beforeSync, when set (tests only), runs before each sync: a test holds the log
	// there to look at what is committed but not durable.
	beforeSync atomic.Pointer[func()]

	// owned by the writer goroutine
	f    *os.File
	seg  uint64
	size int64
	// next is the following segment being zero-filled in the background, once the
	// current one has seen real traffic; prealloc says the current one was.
	next     chan *os.File
	prealloc bool
	spare    []byte
	applyQ   *applyQueue
}

// walSegments lists dir's segment numbers in order.
func walSegments(dir string) ([]uint64, error) {
	names, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var segs []uint64
	for _, n := range names {
		num, ok := strings.CutSuffix(n.Name(), ".log")
		if !ok {
			continue
		}
		if v, err := strconv.ParseUint(num, 10, 64); err == nil {
			segs = append(segs, v)
		}
	}
	slices.Sort(segs)
	return segs, nil
}

func segmentPath(dir string, n uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%016d.log", n))
}

// replayWAL reads every segment in order and calls apply with each record's entries.
// It returns the segments read so that the caller can delete them once applied.
func replayWAL(dir string, apply func([]*walEntry) error) (segs []uint64, records int, err error) {
	segs, err = walSegments(dir)
	if err != nil {
		return nil, 0, err
	}
	last := -1 // the last segment holding any record: only it may end torn
	for i, n := range segs {
		used, err := segmentUsed(segmentPath(dir, n))
		if err != nil {
			return nil, records, err
		}
		if used {
			last = i
		}
	}
	// One segment in memory at a time: start-up reads at most 64 MiB at once.
	for i, n := range segs {
		path := segmentPath(dir, n)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, records, err
		}
		off := 0
		for off < len(b) && !endOfSegment(b, off) {
			entries, next, rerr := decodeLogRecord(b, off)
			if rerr != nil {
				if i != last {
					return nil, records, fmt.Errorf("store: write-ahead log %s is corrupt at byte %d (%v) and is not the last segment: refusing to start with a hole in acknowledged history", path, off, rerr)
				}
				// A torn tail: the crash came mid-append, before that commit was acknowledged.
				if err := os.Truncate(path, int64(off)); err != nil {
					return nil, records, err
				}
				break
			}
			if err := apply(entries); err != nil {
				return nil, records, err
			}
			records++
			off = next
		}
	}
	return segs, records, nil
}

// segmentUsed reports whether a segment holds any record, from its first header.
func segmentUsed(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, walHeaderLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, err
	}
	return !endOfSegment(head[:n], 0), nil
}

// endOfSegment reports whether off is where a segment's records end: the end of the
// file, or the zeroes a preallocated segment was filled with (no record has length 0).
func endOfSegment(b []byte, off int) bool {
	if off >= len(b) {
		return true
	}
	if len(b)-off < walHeaderLen {
		return false
	}
	return binary.LittleEndian.Uint64(b[off:]) == 0
}

func appendLogRecord(buf []byte, entries []*walEntry) []byte {
	start := len(buf)
	buf = append(buf, make([]byte, walHeaderLen)...)
	buf = binary.AppendUvarint(buf, uint64(len(entries)))
	for _, e := range entries {
		var flags byte
		if e.deleted {
			flags = entryDelete
		}
		buf = append(buf, flags)
		buf = binary.AppendUvarint(buf, e.expiresAt)
		buf = binary.AppendUvarint(buf, uint64(len(e.key)))
		buf = append(buf, e.key...)
		buf = binary.AppendUvarint(buf, uint64(len(e.val)))
		buf = append(buf, e.val...)
	}
	payload := buf[start+walHeaderLen:]
	binary.LittleEndian.PutUint32(buf[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[start+4:], crc32.Checksum(payload, crcTable))
	return buf
}

var errTorn = errors.New("torn record")

func decodeLogRecord(b []byte, off int) ([]*walEntry, int, error) {
	if len(b)-off < walHeaderLen {
		return nil, 0, errTorn
	}
	n := int(binary.LittleEndian.Uint32(b[off:]))
	sum := binary.LittleEndian.Uint32(b[off+4:])
	if n > len(b)-off-walHeaderLen {
		return nil, 0, errTorn
	}
	p := b[off+walHeaderLen : off+walHeaderLen+n]
	if crc32.Checksum(p, crcTable) != sum {
		return nil, 0, errors.New("checksum mismatch")
	}
	count, k := binary.Uvarint(p)
	if k <= 0 {
		return nil, 0, io.ErrUnexpectedEOF
	}
	p = p[k:]
	entries := make([]*walEntry, 0, count)
	for range count {
		if len(p) < 1 {
			return nil, 0, io.ErrUnexpectedEOF
		}
		e := &walEntry{deleted: p[0]&entryDelete != 0}
		p = p[1:]
		var ok bool
		if e.expiresAt, p, ok = uvarint(p); !ok {
			return nil, 0, io.ErrUnexpectedEOF
		}
		var key, val []byte
		if key, p, ok = lengthPrefixed(p); !ok {
			return nil, 0, io.ErrUnexpectedEOF
		}
		if val, p, ok = lengthPrefixed(p); !ok {
			return nil, 0, io.ErrUnexpectedEOF
		}
		e.key, e.val = string(key), val
		entries = append(entries, e)
	}
	return entries, off + walHeaderLen + n, nil
}

func uvarint(p []byte) (uint64, []byte, bool) {
	v, k := binary.Uvarint(p)
	if k <= 0 {
		return 0, p, false
	}
	return v, p[k:], true
}

func lengthPrefixed(p []byte) ([]byte, []byte, bool) {
	n, p, ok := uvarint(p)
	if !ok || n > uint64(len(p)) {
		return nil, p, false
	}
	return p[:n:n], p[n:], true
}

// openWAL starts a fresh segment numbered after first (0: an in-memory store keeps no
// file) and the writer goroutine.
func openWAL(dir string, first uint64, sync bool, applyQ *applyQueue, stats *logCounters) (*wal, error) {
	w := &wal{dir: dir, sync: sync, stats: stats, cur: &walGen{}, kick: make(chan struct{}, 1), done: make(chan struct{}), applyQ: applyQ}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		if err := w.openSegment(first); err != nil {
			return nil, err
		}
	}
	go w.loop()
	return w, nil
}

func (w *wal) openSegment(n uint64) error {
	f, err := os.OpenFile(segmentPath(w.dir, n), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	syncDir(w.dir, w.sync)
	w.f, w.seg, w.size, w.prealloc = f, n, 0, false
	return nil
}

// syncDir makes a new segment's directory entry survive a power cut too.
func syncDir(dir string, sync bool) {
	if !sync {
		return
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// appendLocked encodes one commit; done hears whether the sync covering it worked. It is called
// with the overlay updated under the same lock, so the log's order is the overlay's.
func (w *wal) appendLocked(entries []*walEntry, done chan<- error) error {
	if w.failed != nil {
		return w.failed
	}
	if w.closing {
		return ErrClosed
	}
	w.buf = appendLogRecord(w.buf, entries)
	w.stats.commits.Add(1)
	w.pending = append(w.pending, entries...)
	if done != nil {
		w.cur.waiters = append(w.cur.waiters, done)
	}
	select {
	case w.kick <- struct{}{}:
	default:
	}
	return nil
}

func (w *wal) loop() {
	defer close(w.done)

	for range w.kick {
		for {
			w.mu.Lock()
			if len(w.buf) == 0 {
				closing := w.closing
				w.mu.Unlock()
				if closing {
					w.finish()
					return
				}
				break
			}
			buf, pending, gen := w.buf, w.pending, w.cur
			w.buf, w.pending, w.cur = w.spare[:0], nil, &walGen{}
			w.mu.Unlock()

			err := w.write(buf)
			if err != nil {
				w.mu.Lock()
				w.failed = fmt.Errorf("store: write-ahead log failed, refusing further writes: %w", err)
				w.mu.Unlock()
				gen.finish(err)
				continue
			}
			w.spare = buf
			markDurable(pending)
			gen.finish(nil)
			w.applyQ.push(applyBatch{entries: pending})
			w.maybeRotate()
		}
	}
}

func (w *wal) write(buf []byte) error {
	if w.f == nil {
		return nil
	}
	if _, err := w.f.Write(buf); err != nil {
		return err
	}
	w.stats.bytes.Add(int64(len(buf)))
	if hook := w.beforeSync.Load(); hook != nil {
		(*hook)()
	}
	w.size += int64(len(buf))
	if w.sync {
		start := time.Now()
		err := unix.Fdatasync(int(w.f.Fd()))
		w.stats.syncs.Add(1)
		w.stats.syncTime.observe(time.Since(start))
		return err
	}
	return nil
}

// Preallocation: appending to a file makes every fdatasync also commit the new size
// to the filesystem's journal; overwriting blocks already written does not. Measured
// with the store benchmark: about 5 % more views/s (10-18 % with every segment zeroed,
// the first too). Only a log that sees traffic gets
// preallocated segments, so idle and test stores never write 64 MiB of zeroes.
func (w *wal) maybeRotate() {
	if w.f == nil {
		return
	}
	switch {
	case w.size >= walSegmentLimit:
		w.rotate()
	case w.next == nil && w.size >= walPrepareAfter:
		w.next = prepareSegment(w.dir, w.seg+1, w.sync)
	case w.next != nil && !w.prealloc && len(w.next) > 0:
		w.rotate() // leave a plain segment as soon as a preallocated one is ready
	}
}

// prepareSegment creates segment n filled with zeroes and synced, in the background.
// It delivers nil if it could not; the writer then opens a plain segment.
func prepareSegment(dir string, n uint64, sync bool) chan *os.File {
	c := make(chan *os.File, 1)
	go func() {
		path := segmentPath(dir, n)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			c <- nil
			return
		}
		// Paced, a megabyte and its sync at a time: one burst of 64 MiB would stall the
		// log's own fdatasyncs behind it.
		zero := make([]byte, min(1<<20, walSegmentLimit))
		for written := int64(0); written < walSegmentLimit && err == nil; written += int64(len(zero)) {
			if _, err = f.Write(zero); err == nil && sync {
				err = unix.Fdatasync(int(f.Fd()))
			}
			time.Sleep(preparePace)
		}
		if err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
		if err != nil {
			f.Close()
			os.Remove(path)
			c <- nil
			return
		}
		c <- f
	}()
	return c
}

func (w *wal) rotate() {
	old := w.seg
	// A preallocated segment ends in zeroes; cut them so the file says what it holds.
	err := w.f.Truncate(w.size)
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		w.mu.Lock()
		w.failed = err
		w.mu.Unlock()
		return
	}
	var next *os.File
	if w.next != nil {
		next = <-w.next
		w.next = nil
	}
	if next != nil {
		w.f, w.seg, w.size, w.prealloc = next, old+1, 0, true
		syncDir(w.dir, w.sync)
	} else if err := w.openSegment(old + 1); err != nil {
		w.mu.Lock()
		w.failed = fmt.Errorf("store: write-ahead log: open next segment: %w", err)
		w.mu.Unlock()
		w.f = nil
		return
	}
	w.applyQ.push(applyBatch{closed: old})
}

// finish closes the last segment and tells the applier it may go once applied.
func (w *wal) finish() {
	if w.next != nil { // prepared and never written: nothing to keep
		if f := <-w.next; f != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}
	if w.f != nil {
		_ = w.f.Truncate(w.size)
		_ = w.f.Close()
		w.applyQ.push(applyBatch{closed: w.seg})
	}
	w.applyQ.close()
}

// close stops accepting commits, writes what is buffered and waits for the writer.
func (w *wal) close() {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
	<-w.done
}
