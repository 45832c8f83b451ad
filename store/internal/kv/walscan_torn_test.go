package kv

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	badger "github.com/dgraph-io/badger/v4"
)

// multiFrame encodes one frame carrying a commit per record; the first record's value
// is sized so that it ends on an 8-byte boundary, as about one record in eight does.
// A record is laid out as a frame is ([length][crc32c][payload]), and the first one
// starts 8 bytes into its frame, aligned.
func multiFrame(prefix string) []byte {
	frame := make([]byte, frameHeaderLen)
	// 8 (header) + 5 (count, flags, expiry, key length, value length) + key + value.
	key := prefix + "1"
	val := make([]byte, 8+(8-(8+5+len(key))%8)%8)
	frame = appendLogRecord(frame, []*walEntry{{key: key, val: val}})
	for i := 2; i <= 4; i++ {
		frame = appendLogRecord(frame, []*walEntry{{key: fmt.Sprint(prefix, i), val: []byte(fmt.Sprintf("value %d of the frame", i))}})
	}
	return sealFrame(frame)
}

// scanTail scans a log of one segment (segment 1) holding frames a=1 and b=2, then
// tail, the way a start does with nothing in Badger yet, and returns the keys it
// would apply and the damage it found.
func scanTail(t *testing.T, tail []byte) ([]string, *LogDamageError) {
	t.Helper()
	dir := t.TempDir()
	writeSegment(t, dir, 1, 0, [][2]string{{"a", "1"}, {"b", "2"}}, tail)
	var keys []string
	res, err := (&walScan{dir: dir}).run(func(es []*walEntry) error {
		for _, e := range es {
			keys = append(keys, e.key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys, res.damage
}

// A crash in the middle of writing the last frame (never synced, so never
// acknowledged) leaves it cut at any byte, or, in a preallocated segment, followed by
// the zeroes that were there: at every one of those points the start leaves out only
// that frame and keeps every frame before it. A whole record inside the cut frame
// used to be taken for a frame after the damage (records are framed as frames are),
// and the start was refused as a damaged log whenever the cut fell past the end of
// one that happened to end on an 8-byte boundary: a kill -9 during a large group
// commit sent the operator to `hangar repair`.
func TestTornLastFrameAtEveryByteIsLeftOut(t *testing.T) {
	last := multiFrame("t:")
	for _, prealloc := range []bool{false, true} {
		for cut := 1; cut < len(last); cut++ {
			tail := append([]byte{}, last[:cut]...)
			if prealloc {
				tail = append(tail, make([]byte, 4096)...)
			}
			want := []string{"a", "b"}
			if prealloc && allZero(last[cut:]) {
				want = append(want, "t:1", "t:2", "t:3", "t:4") // only padding was cut: the frame is whole
			}
			keys, damage := scanTail(t, tail)
			if damage != nil {
				t.Fatalf("prealloc=%v, cut at byte %d of %d: the torn last frame stops the start: %v", prealloc, cut, len(last), damage)
			}
			if !slices.Equal(keys, want) {
				t.Fatalf("prealloc=%v, cut at byte %d: replayed %q, want %q", prealloc, cut, keys, want)
			}
		}
	}

	// The same through a start, at the cut that used to be refused.
	dir, walDir, next := closedStore(t)
	writeSegment(t, walDir, next, 0, [][2]string{{"a", "1"}, {"b", "2"}}, last[:len(last)-3])
	s, err := openQuiet(dir)
	if err != nil {
		t.Fatalf("start after a torn last frame: %v", err)
	}
	defer s.Close()
	for key, want := range map[string]string{"a": "1", "b": "2"} {
		if got, err := getKey(s, key); err != nil || got != want {
			t.Fatalf("%s = %q, %v; want %q", key, got, err, want)
		}
	}
	for i := 1; i <= 4; i++ {
		if _, err := getKey(s, fmt.Sprint("t:", i)); !errors.Is(err, badger.ErrKeyNotFound) {
			t.Fatalf("t:%d of the torn frame: %v, want not found", i, err)
		}
	}
}

// The same frame damaged at any byte, with a whole frame after it, is damage in the
// middle of the log (a frame is only written once the one before it was synced, so it
// was acknowledged): the start is refused, naming where the damaged frame starts.
func TestTornMiddleFrameAtEveryByteStopsTheStart(t *testing.T) {
	mid := multiFrame("m:")
	after := sealFrame(appendLogRecord(make([]byte, frameHeaderLen), []*walEntry{{key: "z", val: []byte("26")}}))
	at := int64(len(buildSegment(1, 0, [][2]string{{"a", "1"}, {"b", "2"}})))
	for from := 0; from < len(mid); from++ {
		for _, how := range []string{"zeroed from", "flipped at"} {
			bad := append([]byte{}, mid...)
			if how == "zeroed from" {
				clear(bad[from:]) // the rest never reached the disk
			} else {
				bad[from] ^= 0x20
			}
			if slices.Equal(bad, mid) {
				continue // zeroes written over the padding's zeroes
			}
			_, damage := scanTail(t, append(bad, after...))
			if damage == nil || damage.Segment != 1 || damage.Offset != at {
				t.Fatalf("frame %s byte %d, a whole frame after it: damage %v, want at segment 1 byte %d", how, from, damage, at)
			}
		}
	}
}

func openQuiet(dir string) (*DB, error) {
	return Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.DiscardHandler)})
}
