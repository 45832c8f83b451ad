package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	"golang.org/x/sys/unix"
)

const (
	logSize        = 64 << 20 // preallocated, as hangar's log segments are
	badgerBatchAge = time.Second
	badgerBatchLen = 65_536 // entries; hangar's applier batches the same
)

// groupLog is a write-ahead log with group commit: appenders queue their records and
// wait; one writer writes everything queued with one write and one fdatasync, then
// releases every appender it covered. With Badger on, each written batch is then
// applied to Badger in the background, as hangar's store does behind its log.
type groupLog struct {
	f       *os.File
	mu      sync.Mutex
	buf     []byte
	waiters []chan error
	kick    chan struct{}
	off     int64
	syncs   atomic.Int64
	err     atomic.Pointer[error]
	stop    chan struct{}
	stopped chan struct{}

	db      *badger.DB
	apply   chan []byte
	applied chan struct{}
}

func openGroupLog(dir string, withBadger bool) (*groupLog, error) {
	f, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		return nil, err
	}
	_, err = f.Write(make([]byte, logSize))
	if err == nil {
		err = unix.Fdatasync(int(f.Fd()))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	l := &groupLog{f: f, kick: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	if withBadger {
		l.db, err = badger.Open(badger.DefaultOptions(filepath.Join(dir, "badger")).WithLogger(nil).WithSyncWrites(true))
		if err != nil {
			f.Close()
			return nil, err
		}
		l.apply = make(chan []byte, 1024)
		l.applied = make(chan struct{})
		go l.applier()
	}
	go l.writer()
	return l, nil
}

func (l *groupLog) append(rec []byte) error {
	ch := make(chan error, 1)
	l.mu.Lock()
	l.buf = append(l.buf, rec...)
	l.waiters = append(l.waiters, ch)
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default:
	}
	return <-ch
}

func (l *groupLog) writer() {
	defer close(l.stopped)
	var buf []byte
	var waiters []chan error
	for {
		select {
		case <-l.kick:
		case <-l.stop:
			return
		}
		l.mu.Lock()
		buf, l.buf = l.buf, buf[:0]
		waiters, l.waiters = l.waiters, waiters[:0]
		l.mu.Unlock()
		if len(waiters) == 0 {
			continue
		}
		err := l.write(buf)
		for _, ch := range waiters {
			ch <- err
		}
		if err == nil && l.apply != nil {
			l.apply <- bytes.Clone(buf)
		}
	}
}

func (l *groupLog) write(buf []byte) error {
	if l.off+int64(len(buf)) > logSize {
		l.off = 0 // a run's records fit many times over; wrapping keeps the file preallocated
	}
	if _, err := l.f.WriteAt(buf, l.off); err != nil {
		return l.fail(err)
	}
	l.off += int64(len(buf))
	l.syncs.Add(1)
	if err := unix.Fdatasync(int(l.f.Fd())); err != nil {
		return l.fail(err)
	}
	return nil
}

// applier writes the log's records to Badger keyed by order id, one write batch per
// second or per badgerBatchLen records.
func (l *groupLog) applier() {
	defer close(l.applied)
	wb := l.db.NewWriteBatch()
	started, n := time.Now(), 0
	for buf := range l.apply {
		for len(buf) > 0 {
			end := bytes.IndexByte(buf, '\n')
			rec := buf[:end]
			buf = buf[end+1:]
			id := rec[len(`{"id":`):bytes.IndexByte(rec, ',')]
			if err := wb.Set(append([]byte("order/"), id...), rec); err != nil {
				l.fail(err)
			}
			n++
		}
		if n >= badgerBatchLen || time.Since(started) >= badgerBatchAge {
			if err := wb.Flush(); err != nil {
				l.fail(err)
			}
			wb = l.db.NewWriteBatch()
			started, n = time.Now(), 0
		}
	}
	if err := wb.Flush(); err != nil {
		l.fail(err)
	}
}

func (l *groupLog) fail(err error) error {
	err = fmt.Errorf("log: %w", err)
	l.err.CompareAndSwap(nil, &err)
	return err
}

func (l *groupLog) failed() error {
	if p := l.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (l *groupLog) close() {
	close(l.stop)
	<-l.stopped
	if l.apply != nil {
		close(l.apply)
		<-l.applied
		_ = l.db.Close()
	}
	_ = l.f.Close()
}
