package kv

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
)

// The log's on-disk format. A segment is
//
//	header: magic "HGRWAL02", segment number u64, prevLen u64, crc32c of those 24 bytes
//	        u32, 4 zero bytes (32 bytes in all)
//	frames: [payload length u32][crc32c of payload u32][payload][zeroes to a multiple of 8]
//	the rest: zeroes (a preallocated segment) or the end of the file
//
// A frame is everything one write and one fdatasync covered; its payload is one or more
// records, each one commit (appendLogRecord). prevLen is how many bytes of the previous
// segment hold frames: a segment is only ever read up to what its successor says, so a
// write that failed at the end of a segment (and was answered with an error) can never
// come back at a replay, whether or not its bytes reached the disk.
//
// What a start may accept without asking: the last frame of the last segment being
// incomplete or failing its checksum with nothing but zeroes after it, which is a write
// whose sync never finished (so nobody was told it succeeded). Anything else that does
// not parse is damage: a flipped byte, a cut, a zeroed header, a segment missing from
// the sequence, or a segment shorter than what Badger already holds from it (the
// applier records that position in Badger, walApplied). Damage stops the start with
// an error naming the file and offset; `hangar repair` is the explicit way past it.

const (
	walDirName     = "wal"
	segMagic       = "HGRWAL02"
	segHeaderLen   = 32
	frameHeaderLen = 8
	// walHeaderLen is a record's header inside a frame (and a whole record of the
	// unframed format written before segment headers existed).
	walHeaderLen = 8
	entryDelete  = 1
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func encodeSegHeader(seg, prevLen uint64) []byte {
	b := make([]byte, segHeaderLen)
	copy(b, segMagic)
	binary.LittleEndian.PutUint64(b[8:], seg)
	binary.LittleEndian.PutUint64(b[16:], prevLen)
	binary.LittleEndian.PutUint32(b[24:], crc32.Checksum(b[:24], crcTable))
	return b
}

// segHeader is a decoded segment header.
type segHeader struct{ seg, prevLen uint64 }

func decodeSegHeader(b []byte) (segHeader, error) {
	if len(b) < segHeaderLen {
		return segHeader{}, errors.New("segment header is cut short")
	}
	if string(b[:8]) != segMagic {
		return segHeader{}, errors.New("segment header has no hangar log magic")
	}
	if crc32.Checksum(b[:24], crcTable) != binary.LittleEndian.Uint32(b[24:]) {
		return segHeader{}, errors.New("segment header checksum mismatch")
	}
	return segHeader{seg: binary.LittleEndian.Uint64(b[8:]), prevLen: binary.LittleEndian.Uint64(b[16:])}, nil
}

// sealFrame fills in the frame header that buf starts with and pads the frame.
func sealFrame(buf []byte) []byte {
	payload := buf[frameHeaderLen:]
	binary.LittleEndian.PutUint32(buf, uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[4:], crc32.Checksum(payload, crcTable))
	for len(buf)%8 != 0 {
		buf = append(buf, 0)
	}
	return buf
}

func align8(n int) int { return (n + 7) &^ 7 }

var (
	errFrameEnd  = errors.New("end of frames")
	errFrameTorn = errors.New("frame runs past the end of the file")
)

// readFrame parses the frame at off. errFrameEnd means eight zero bytes (or the end of
// the file) stand where a frame would.
func readFrame(b []byte, off int) (payload []byte, next int, err error) {
	if off >= len(b) {
		return nil, off, errFrameEnd
	}
	if len(b)-off < frameHeaderLen {
		if allZero(b[off:]) {
			return nil, off, errFrameEnd
		}
		return nil, 0, errFrameTorn
	}
	n := int(binary.LittleEndian.Uint32(b[off:]))
	sum := binary.LittleEndian.Uint32(b[off+4:])
	if n == 0 {
		if sum == 0 {
			return nil, off, errFrameEnd
		}
		return nil, 0, errors.New("frame header has length 0")
	}
	end := off + frameHeaderLen + n
	if end > len(b) || end < off {
		return nil, 0, errFrameTorn
	}
	next = align8(end)
	if next > len(b) {
		return nil, 0, errFrameTorn
	}
	payload = b[off+frameHeaderLen : end]
	if crc32.Checksum(payload, crcTable) != sum {
		return nil, 0, errors.New("frame checksum mismatch")
	}
	if !allZero(b[end:next]) {
		return nil, 0, errors.New("frame padding is not zero")
	}
	return payload, next, nil
}

// frameRecords decodes the commits of a frame's payload.
func frameRecords(p []byte, fn func([]*walEntry) error) (int, error) {
	records := 0
	for off := 0; off < len(p); {
		entries, next, err := decodeLogRecord(p, off)
		if err != nil {
			return records, fmt.Errorf("record at payload byte %d: %w", off, err)
		}
		if fn != nil {
			if err := fn(entries); err != nil {
				return records, err
			}
		}
		records++
		off = next
	}
	return records, nil
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// validFrameAfter reports whether a whole, checksummed frame starts anywhere in b at or
// after from: the sign that the bad bytes before it were once acknowledged, since a
// frame is only written after the one before it was synced.
//
// A record is laid out as a frame is, and a frame's first record starts 8 bytes in,
// aligned: a whole record of a torn last frame that ends on an 8-byte boundary reads
// as a frame by itself. So a frame counts only if its payload is whole records too,
// which a record's payload (an entry count, then entries) is not but by a checksum
// collision.
func validFrameAfter(b []byte, from int) bool {
	for off := align8(from); off+frameHeaderLen <= len(b); off += 8 {
		n := int(binary.LittleEndian.Uint32(b[off:]))
		if n == 0 || off+frameHeaderLen+n > len(b) {
			continue
		}
		if payload, _, err := readFrame(b, off); err == nil {
			if _, err := frameRecords(payload, nil); err == nil {
				return true
			}
		}
	}
	return false
}

// appendLogRecord encodes one commit.
//
//	[payload length u32][crc32c of payload u32][payload]
//	payload = uvarint entry count, then per entry:
//	          flags u8 (1 = delete), uvarint expiresAt (unix s, 0 = never),
//	          uvarint key length, key, uvarint value length, value
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
	if k <= 0 || count > uint64(len(p)) {
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
	if len(p) != 0 {
		return nil, 0, errors.New("record has bytes after its last entry")
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
		if !ok || n.IsDir() {
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

// logPos is a place in the log: a segment and a byte offset in it.
type logPos struct{ seg, off uint64 }

func (p logPos) before(q logPos) bool {
	return p.seg < q.seg || (p.seg == q.seg && p.off < q.off)
}

func (p logPos) encode() []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, p.seg), p.off)
}

func decodeLogPos(b []byte) (logPos, bool) {
	if len(b) != 16 {
		return logPos{}, false
	}
	return logPos{seg: binary.BigEndian.Uint64(b), off: binary.BigEndian.Uint64(b[8:])}, true
}
