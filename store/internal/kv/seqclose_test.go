package kv

import (
	"encoding/binary"
	"testing"
)

// A number handed out while Close runs, and used by a commit Close lets finish, is
// never handed out again after the restart. Close wrote each sequence's unused
// numbers back before it stopped the commits: a commit still running (or one
// queued) then took the number written back as "not handed out yet", its commit was
// acknowledged, and the next start gave the same number to another order, whose
// record overwrote the first.
func TestSeqNumberUsedDuringCloseIsNotHandedOutAgain(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	first, err := s.NextSeq("seq:order")
	if err != nil {
		t.Fatal(err)
	}
	block, started := make(chan struct{}), make(chan struct{})
	var used uint64
	held := make(chan error, 1)
	go func() {
		held <- s.Update(func(txn *Txn) error {
			close(started)
			<-block
			// The commit in flight takes a number, as CreateOrder does, and stores a
			// record under it.
			n, err := s.NextSeq("seq:order")
			if err != nil {
				return err
			}
			used = n
			return txn.Set(binary.BigEndian.AppendUint64([]byte("order:"), n), []byte("first"))
		})
	}()
	<-started
	// Close has begun once it refuses commits; the held one still runs.
	closed := closeBegun(s)
	close(block)
	if err := <-held; err != nil {
		// Refusing the number is as good as never handing it out twice.
		t.Logf("the commit in flight during Close: %v", err)
		used = 0
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if used != 0 && used <= first {
		t.Fatalf("numbers not increasing: %d after %d", used, first)
	}

	s = quietOpen(t, dir)
	defer s.Close()
	next, err := s.NextSeq("seq:order")
	if err != nil {
		t.Fatal(err)
	}
	if next <= first || (used != 0 && next <= used) {
		t.Fatalf("after a restart the sequence handed out %d again (the run before used %d, then %d during Close)", next, first, used)
	}
}
