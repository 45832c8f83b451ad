package kv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// LogDamageError is a start refused because the write-ahead log does not read back as
// it was written: acknowledged commits may be missing, and hangar will not come up with
// a hole in its history. `hangar repair` is the explicit way past it.
type LogDamageError struct {
	Path    string // the damaged or missing segment
	Segment uint64
	Offset  int64 // where the damage starts in Path
	Reason  string
}

func (e *LogDamageError) Error() string {
	return fmt.Sprintf("store: the write-ahead log is damaged: %s at byte %d: %s. Nothing was changed and hangar will not start with acknowledged writes possibly missing. Keep a copy of the data directory, then run `hangar repair --data DIR`: it keeps the damaged segments, cuts the log where the damage starts and reports what was lost", e.Path, e.Offset, e.Reason)
}

// walScan reads the log's segments in order, checking everything walformat.go
// promises, and hands the commits Badger does not have yet to apply.
type walScan struct {
	dir string
	// applied is how far Badger holds the log (walApplied); the zero value means
	// nothing is known, as in a store written before it was recorded.
	applied logPos
	// legacyOK allows segments of the unframed format written before segment
	// headers existed (Badger has no walFormat mark yet).
	legacyOK bool
}

// scanResult is what a scan found.
type scanResult struct {
	segs    []uint64 // the segments read, all safe to delete once applied
	records int      // commits handed to apply
	end     logPos   // the end of the last whole frame
	// tornBytes is how many bytes of an unacknowledged last write were left out.
	tornBytes int
	tornAt    logPos
	damage    *LogDamageError
}

// segmentFile is one segment read whole.
type segmentFile struct {
	num    uint64
	path   string
	b      []byte
	head   segHeader
	legacy bool
	unused bool // a preallocated segment never written: all zeroes
	bad    error
}

func (sc *walScan) load() ([]*segmentFile, error) {
	nums, err := walSegments(sc.dir)
	if err != nil {
		return nil, err
	}
	files := make([]*segmentFile, 0, len(nums))
	for _, n := range nums {
		path := segmentPath(sc.dir, n)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		f := &segmentFile{num: n, path: path, b: b}
		switch {
		case allZero(b):
			f.unused = true
		case len(b) >= 8 && string(b[:8]) == segMagic:
			f.head, f.bad = decodeSegHeader(b)
			if f.bad == nil && f.head.seg != n {
				f.bad = fmt.Errorf("its header says it is segment %d", f.head.seg)
			}
		case sc.legacyOK && len(b) >= walHeaderLen && !allZero(b[:walHeaderLen]):
			f.legacy = true
		case len(b) >= segHeaderLen && allZero(b[:segHeaderLen]):
			f.bad = errors.New("its header is zeroed but it holds data")
		default:
			f.bad = errors.New("it does not start with a hangar log header")
		}
		files = append(files, f)
	}
	// Only the newest may be a preallocated segment that was never used, and only if
	// Badger holds nothing of it: zeroes (or nothing) where Badger holds frames are a
	// segment emptied after the fact, not one never written.
	for len(files) > 0 && files[len(files)-1].unused {
		f := files[len(files)-1]
		if f.num < sc.applied.seg || (f.num == sc.applied.seg && sc.applied.off > segHeaderLen) {
			f.unused = false
			f.bad = fmt.Errorf("it is all zeroes (%d bytes) but Badger holds the log up to segment %d byte %d", len(f.b), sc.applied.seg, sc.applied.off)
			break
		}
		files = files[:len(files)-1]
	}
	for _, f := range files {
		if f.unused {
			f.bad = errors.New("it is all zeroes but later segments exist")
		}
	}
	return files, nil
}

// run checks every segment and calls apply with each commit past sc.applied, in log
// order. Damage ends the scan: it is returned in the result, with what came before it
// applied.
func (sc *walScan) run(apply func([]*walEntry) error) (scanResult, error) {
	var res scanResult
	files, err := sc.load()
	if err != nil {
		return res, err
	}
	for _, f := range files {
		res.segs = append(res.segs, f.num)
	}
	if len(files) == 0 {
		return res, nil
	}
	damage := func(f *segmentFile, off int, reason string) (scanResult, error) {
		res.damage = &LogDamageError{Path: f.path, Segment: f.num, Offset: int64(off), Reason: reason}
		return res, nil
	}
	if sc.applied.seg > 0 && files[0].num > sc.applied.seg+1 {
		missing := &segmentFile{num: sc.applied.seg + 1, path: segmentPath(sc.dir, sc.applied.seg+1)}
		return damage(missing, 0, fmt.Sprintf("the segment is missing: Badger holds the log up to segment %d, and the oldest left is %d", sc.applied.seg, files[0].num))
	}
	// The oldest segment left says how long the one before it was (prevLen; 0 for the
	// first after a start, whose predecessors were all replayed into Badger): that one
	// may be gone only if Badger holds it to its end. Without this, deleting the oldest
	// segment while Badger lagged (refusing applies, or in a store's first second,
	// before any apply) lost its commits without a word.
	if f := files[0]; !f.legacy && !f.unused && f.bad == nil && f.head.prevLen > 0 && f.num > 0 {
		if prev := (logPos{f.num - 1, f.head.prevLen}); sc.applied.before(prev) {
			missing := &segmentFile{num: f.num - 1, path: segmentPath(sc.dir, f.num-1)}
			held := "none of it"
			if sc.applied.seg > 0 {
				held = fmt.Sprintf("the log only up to segment %d byte %d", sc.applied.seg, sc.applied.off)
			}
			return damage(missing, 0, fmt.Sprintf("the segment is missing: it held %d bytes, and Badger holds %s", f.head.prevLen, held))
		}
	}
	for i, f := range files {
		if i > 0 && f.num != files[i-1].num+1 {
			missing := &segmentFile{num: files[i-1].num + 1, path: segmentPath(sc.dir, files[i-1].num+1)}
			return damage(missing, 0, fmt.Sprintf("the segment is missing between %d and %d", files[i-1].num, f.num))
		}
		if f.bad != nil {
			return damage(f, 0, f.bad.Error())
		}
		var next *segmentFile
		if i+1 < len(files) {
			next = files[i+1]
			if next.num != f.num+1 {
				// Named before next's header is read against this one: the bytes missing
				// are a whole segment's, not this one's end.
				missing := &segmentFile{num: f.num + 1, path: segmentPath(sc.dir, f.num+1)}
				return damage(missing, 0, fmt.Sprintf("the segment is missing between %d and %d", f.num, next.num))
			}
		}
		if f.legacy {
			if done, err := sc.runLegacy(f, next == nil, apply, &res); err != nil || done {
				return res, err
			}
			continue
		}
		limit := len(f.b)
		if next != nil && !next.legacy {
			if next.bad != nil {
				return damage(next, 0, next.bad.Error())
			}
			if next.head.prevLen > uint64(len(f.b)) {
				return damage(f, len(f.b), fmt.Sprintf("the segment holds %d bytes but the next one says it had %d: it was cut short", len(f.b), next.head.prevLen))
			}
			limit = int(next.head.prevLen)
		}
		b := f.b[:limit]
		off := segHeaderLen
		for {
			payload, nxt, ferr := readFrame(b, off)
			if errors.Is(ferr, errFrameEnd) {
				if next != nil && off != limit {
					return damage(f, off, fmt.Sprintf("the frames end at byte %d but the next segment says this one had %d bytes", off, limit))
				}
				if !allZero(b[off:]) {
					if validFrameAfter(b, off+frameHeaderLen) {
						return damage(f, off, "a frame header is zeroed and whole frames follow it")
					}
					res.tornBytes, res.tornAt = lastNonZero(b[off:]), logPos{f.num, uint64(off)}
				}
				break
			}
			if ferr != nil {
				if next != nil || validFrameAfter(b, off+frameHeaderLen) {
					return damage(f, off, ferr.Error())
				}
				// The last write, never synced, so never acknowledged.
				res.tornBytes, res.tornAt = lastNonZero(b[off:]), logPos{f.num, uint64(off)}
				break
			}
			pos := logPos{f.num, uint64(nxt)}
			if sc.applied.before(pos) {
				n, err := frameRecords(payload, apply)
				res.records += n
				if err != nil {
					var ae applyError
					if errors.As(err, &ae) {
						return res, ae.err
					}
					return damage(f, off, err.Error())
				}
			} else if _, err := frameRecords(payload, nil); err != nil {
				return damage(f, off, err.Error())
			}
			res.end = pos
			off = nxt
		}
		if f.num == sc.applied.seg && uint64(off) < sc.applied.off {
			return damage(f, off, fmt.Sprintf("the segment ends at byte %d but Badger already holds it up to byte %d: it was cut short", off, sc.applied.off))
		}
		if res.end.seg != f.num {
			res.end = logPos{f.num, uint64(off)}
		}
	}
	return res, nil
}

// applyError marks an error of the apply callback (Badger's), as opposed to damage.
type applyError struct{ err error }

func (e applyError) Error() string { return e.err.Error() }

// runLegacy reads a segment of the unframed format: records back to back, ending at
// zeroes or the end of the file; only the last segment may end in a torn record.
func (sc *walScan) runLegacy(f *segmentFile, last bool, apply func([]*walEntry) error, res *scanResult) (bool, error) {
	b := f.b
	off := 0
	for off < len(b) && !(len(b)-off >= walHeaderLen && allZero(b[off:off+walHeaderLen])) {
		entries, next, err := decodeLogRecord(b, off)
		if err != nil {
			if !last {
				res.damage = &LogDamageError{Path: f.path, Segment: f.num, Offset: int64(off), Reason: err.Error()}
				return true, nil
			}
			res.tornBytes, res.tornAt = lastNonZero(b[off:]), logPos{f.num, uint64(off)}
			break
		}
		if err := apply(entries); err != nil {
			var ae applyError
			if errors.As(err, &ae) {
				return true, ae.err
			}
			return true, err
		}
		res.records++
		off = next
	}
	res.end = logPos{f.num, uint64(off)}
	return false, nil
}

// lastNonZero is how many bytes of b run up to its last non-zero byte.
func lastNonZero(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0 {
			return i + 1
		}
	}
	return 0
}

// RepairReport says what `hangar repair` did.
type RepairReport struct {
	Damage     *LogDamageError // nil: the log was sound and nothing was changed
	KeptAt     string          // the directory holding copies of every segment changed or removed
	CutBytes   int64           // bytes removed from the log
	Segments   int             // segments set aside whole
	Lost       int             // commits in readable frames after the cut that Badger did not hold
	InBadger   int             // commits after the cut that Badger already held (kept)
	Unreadable bool            // bytes after the cut that no frame could be read from
	// Missing says the damage is a missing segment whose commits Badger may not all
	// hold: they are lost, their number unknown.
	Missing bool
}

// Repair cuts dir's write-ahead log where it is first damaged, after keeping a copy of
// every segment it changes or removes, and reports what was lost. It is never run
// automatically: only `hangar repair`, with hangar stopped, calls it.
func Repair(dir string, out io.Writer) (RepairReport, error) {
	var rep RepairReport
	walDir := dirWAL(dir)
	db, err := openBadger(Options{Dir: dir, SyncWrites: true})
	if err != nil {
		return rep, err
	}
	defer db.Close()
	sc, err := newWALScan(db, walDir)
	if err != nil {
		return rep, err
	}
	res, err := sc.run(func([]*walEntry) error { return nil })
	if err != nil {
		return rep, err
	}
	if res.damage == nil {
		fmt.Fprintf(out, "The write-ahead log in %s reads back whole (%d segments). Nothing to repair.\n", walDir, len(res.segs))
		return rep, nil
	}
	rep.Damage = res.damage
	d := res.damage
	kept := fmt.Sprintf("%s/damaged-%s", walDir, nowStamp())
	if err := os.MkdirAll(kept, 0o700); err != nil {
		return rep, err
	}
	rep.KeptAt = kept
	// Every segment the cut changes or removes is copied, and the copies made durable,
	// before the first is touched: a failed copy, or a crash part-way, leaves the log as
	// it was, and the repair can be run again.
	var changed []uint64
	for _, n := range res.segs {
		if n < d.Segment {
			continue
		}
		b, err := os.ReadFile(segmentPath(walDir, n))
		if err != nil {
			return rep, err
		}
		if err := keepCopy(fmt.Sprintf("%s/%016d.log", kept, n), b); err != nil {
			return rep, fmt.Errorf("keep a copy of segment %d before the cut (the log is unchanged): %w", n, err)
		}
		changed = append(changed, n)
	}
	syncDir(kept)
	syncDir(walDir)
	for _, n := range changed {
		path := segmentPath(walDir, n)
		b, err := os.ReadFile(path)
		if err != nil {
			return rep, err
		}
		from := 0
		if n == d.Segment {
			from = int(d.Offset)
			if from < segHeaderLen {
				from = 0
			}
		}
		lost, held, unreadable := countAfter(b, from, n, sc.applied)
		rep.Lost += lost
		rep.InBadger += held
		rep.Unreadable = rep.Unreadable || unreadable
		rep.CutBytes += int64(len(bytes.TrimRight(b[min(from, len(b)):], "\x00")))
		if from > 0 {
			if err := truncateSync(path, int64(from)); err != nil {
				return rep, err
			}
			continue
		}
		if err := os.Remove(path); err != nil {
			return rep, err
		}
		rep.Segments++
	}
	syncDir(walDir)
	rep.Missing = !slices.Contains(res.segs, d.Segment) && sc.applied.seg <= d.Segment
	// Badger's record of how far it holds the log must not point past the new end.
	cut := logPos{d.Segment, uint64(d.Offset)}
	if cut.before(sc.applied) {
		if err := writeApplied(db, cut); err != nil {
			return rep, err
		}
	}
	fmt.Fprintf(out, "Damage: %s at byte %d: %s.\n", d.Path, d.Offset, d.Reason)
	fmt.Fprintf(out, "Copies of every segment changed or removed are in %s.\n", kept)
	fmt.Fprintf(out, "Cut %d bytes of log (%d segments removed whole).\n", rep.CutBytes, rep.Segments)
	switch {
	case rep.Lost == 0 && !rep.Unreadable && !rep.Missing:
		fmt.Fprintf(out, "Nothing acknowledged was lost: the %d commits after the cut had already reached Badger.\n", rep.InBadger)
	default:
		fmt.Fprintf(out, "LOST: %d commits after the cut had not reached Badger (%d more after it had, and are kept).\n", rep.Lost, rep.InBadger)
		if rep.Unreadable {
			fmt.Fprintln(out, "Some bytes after the cut could not be read as commits at all; their number is unknown.")
		}
		if rep.Missing {
			fmt.Fprintf(out, "Segment %d was missing: the commits it held that Badger did not have are lost too; their number is unknown.\n", d.Segment)
		}
		fmt.Fprintln(out, "What those commits did (deposits, orders, views, messages) is not in the store now; compare with the provider's and Telegram's records before starting.")
	}
	return rep, nil
}

// keepCopy writes a copy of a segment and syncs it. A variable so that a test can make
// a copy fail part-way through a repair.
var keepCopy = func(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// truncateSync cuts a segment and makes the cut durable before Badger's record of the
// log's end is moved back.
func truncateSync(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// countAfter counts the commits in whole frames of segment b from byte from on: those
// Badger lacks (after applied) and those it holds; unreadable says some non-zero bytes
// belong to no whole frame.
func countAfter(b []byte, from int, seg uint64, applied logPos) (lost, held int, unreadable bool) {
	off := max(from, segHeaderLen)
	if off > len(b) {
		return 0, 0, false
	}
	if from < segHeaderLen && len(b) >= segHeaderLen && from == 0 {
		if _, err := decodeSegHeader(b); err != nil {
			unreadable = unreadable || !allZero(b[:min(len(b), segHeaderLen)])
		}
	}
	for off = align8(off); off+frameHeaderLen <= len(b); {
		payload, next, err := readFrame(b, off)
		if errors.Is(err, errFrameEnd) && allZero(b[off:]) {
			break
		}
		if err != nil {
			// Bytes Badger already holds are not lost, readable or not.
			if !allZero(b[off:min(off+8, len(b))]) && applied.before(logPos{seg, uint64(off + 1)}) {
				unreadable = true
			}
			off += 8
			continue
		}
		n, _ := frameRecords(payload, nil)
		if applied.before(logPos{seg, uint64(next)}) {
			lost += n
		} else {
			held += n
		}
		off = next
	}
	return lost, held, unreadable
}
