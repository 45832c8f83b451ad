package kv

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The free-space floor. A disk that fills up under Badger is worse than one that fills
// under the log: Badger maps its memtable and value log files ahead of its writes, and
// a page of a mapped file that the filesystem cannot back is SIGBUS, not an error. So
// hangar stops taking writes while the floor still leaves Badger room to apply what was
// acknowledged and to compact, and takes them again once an operator frees space.

// DefaultMinFreeBytes is the floor `hangar serve` uses unless told otherwise: room for
// Badger's mapped memtable (2 × 32 MiB) and value log file (2 × 64 MiB), a compaction,
// and a preallocated log segment, on the small disks VPSes come with.
const DefaultMinFreeBytes = 512 << 20

const (
	// spaceEvery is how often the monitor reads the free space; spaceAfter, how many
	// bytes the log may write before it reads again sooner.
	spaceEvery = time.Second
	spaceAfter = 4 << 20
)

// spaceMonitor reads the data directory's free space and tells the log when it falls
// below the floor and when it is back.
type spaceMonitor struct {
	dir   string
	floor int64
	free  func() (uint64, error)
	log   *slog.Logger
	off   bool

	lastFree  atomic.Int64 // bytes free at the last reading (-1: unknown)
	low       atomic.Bool
	sinceRead atomic.Int64
	kick      chan struct{}
	quit      chan struct{}
	done      chan struct{}
	stopOnce  sync.Once
}

func newSpaceMonitor(dir string, floor int64, free func() (uint64, error), inMemory bool, log *slog.Logger) *spaceMonitor {
	m := &spaceMonitor{dir: dir, floor: floor, free: free, log: log, off: inMemory,
		kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	if m.free == nil {
		m.free = m.statfs
	}
	m.lastFree.Store(-1)
	return m
}

func (m *spaceMonitor) statfs() (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(m.dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// start reads the free space once, then every spaceEvery and whenever the log has
// written spaceAfter bytes since the last reading.
func (m *spaceMonitor) start(w *wal) {
	if m.off {
		close(m.done)
		return
	}
	m.check(w)
	go func() {
		defer close(m.done)
		t := time.NewTicker(spaceEvery)
		defer t.Stop()
		for {
			select {
			case <-m.quit:
				return
			case <-t.C:
			case <-m.kick:
			}
			m.check(w)
		}
	}()
}

func (m *spaceMonitor) stop() {
	m.stopOnce.Do(func() { close(m.quit) })
	<-m.done
}

func (m *spaceMonitor) check(w *wal) {
	m.sinceRead.Store(0)
	free, err := m.free()
	if err != nil {
		m.log.Warn("store: cannot read the data directory's free space", "dir", m.dir, "err", err)
		return
	}
	m.lastFree.Store(int64(free))
	low := m.floor > 0 && int64(free) < m.floor
	if m.low.Swap(low) == low {
		return
	}
	w.setLowSpace(low)
	if low {
		m.log.Error("store: the disk is below the free-space floor; refusing writes until space is freed (reads go on)", "dir", m.dir, "free_bytes", free, "floor_bytes", m.floor)
	} else {
		m.log.Info("store: the disk has room again; taking writes", "dir", m.dir, "free_bytes", free, "floor_bytes", m.floor)
	}
}

// written is the log's note of n bytes more on disk.
func (m *spaceMonitor) written(n int64) {
	if m.sinceRead.Add(n) >= spaceAfter {
		notify(m.kick)
	}
}

// room reports whether n more bytes leave the disk above the floor, by the last reading.
func (m *spaceMonitor) room(n int64) bool {
	free := m.lastFree.Load()
	return free < 0 || free-n >= m.floor
}

// Storage is the state of the disk under the store, for /health, /metrics and the
// console.
type Storage struct {
	FreeBytes    int64 // -1: unknown
	MinFreeBytes int64
	// Refusing says why writes are refused now (a full disk, a failing log), or "".
	Refusing string
	// FailedWrites counts log writes or syncs that failed since start.
	FailedWrites int64
}

// Storage reports the disk's state.
func (s *DB) Storage() Storage {
	st := Storage{FreeBytes: s.space.lastFree.Load(), MinFreeBytes: s.space.floor, FailedWrites: s.stats.failedWrites.Load()}
	if err := s.wal.state(); err != nil {
		st.Refusing = err.Error()
	}
	return st
}

// SpaceFor returns ErrInsufficientStorage when writing n more bytes under path would
// take the data directory's filesystem below the floor, reading the free space now.
// Writes on another filesystem (a backup directory on its own disk) are not held to
// it. The store's own writes are guarded by the monitor; this is for files written
// beside it: a scheduled backup into a directory on the same disk wrote on past the
// floor, and the store then refused every write.
func (s *DB) SpaceFor(path string, n int64) error {
	m := s.space
	if m.off || m.floor <= 0 {
		return nil
	}
	var data, at unix.Stat_t
	if err := unix.Stat(m.dir, &data); err != nil {
		return err
	}
	if err := unix.Stat(path, &at); err != nil {
		return err
	}
	if data.Dev != at.Dev {
		return nil
	}
	free, err := m.free()
	if err != nil {
		return err
	}
	if int64(free)-n < m.floor {
		return fmt.Errorf("%w: %d bytes more in %s would leave %d free on the data directory's disk, under its floor of %d",
			ErrInsufficientStorage, n, path, int64(free)-n, m.floor)
	}
	return nil
}
