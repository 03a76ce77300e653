package peer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/replicasync"
)

// Wire format of one batch (all integers unsigned varints unless noted):
//
//	version byte (1) | flags byte | count | count × event
//	event: origin string | seq | epoch | kind byte | request | at (signed varint, unix ns; 0 = zero time) |
//	       endpoint string | promptTokens | uncachedTokens | expectedOutput | blockSize |
//	       nBlocks | nBlocks × uint64 (little endian) | nChain | nChain × uint64 (little endian)
//	       [version 2 and later: model string | priority (signed varint) | class (signed varint)]
//	string: length | bytes
//
// Version 2 adds the queue-order kinds (waiting, left) and their fields;
// version 3 the refused kind (no new fields). A batch is sent as the oldest
// version that carries its kinds, so a replica of an earlier release still
// applies every batch it can understand during a rolling upgrade (and
// refuses, with a clear error, the ones it cannot).
//
// Decoding checks every length against the bytes left before allocating.
const (
	wireVersion1 = 1
	wireVersion2 = 2
	wireVersion  = 3 // the newest version this build reads and writes
	// flagSnapshot marks the first batch of a stream: it and the batches
	// flagged flagSnapshotMore after it are the sender's whole in-flight work.
	flagSnapshot = 1 << 0
	// flagSnapshotMore continues a snapshot split across batches.
	flagSnapshotMore = 1 << 1

	maxString = 256     // replica ids and endpoint keys
	maxInt    = 1 << 31 // token counts and block sizes
)

// batch is one message on a peer stream.
type batch struct {
	Flags  byte
	Events []replicasync.Event
}

var errShort = errors.New("truncated")

// appendBatch encodes b onto dst.
func appendBatch(dst []byte, b *batch) []byte {
	v := byte(wireVersion1)
	for i := range b.Events {
		v = max(v, versionFor(&b.Events[i]))
	}
	dst = append(dst, v, b.Flags)
	dst = binary.AppendUvarint(dst, uint64(len(b.Events)))
	for i := range b.Events {
		dst = appendEvent(dst, &b.Events[i], v)
	}
	return dst
}

// versionFor is the oldest wire version that carries e.
func versionFor(e *replicasync.Event) byte {
	switch {
	case e.Kind > replicasync.KindLeft:
		return wireVersion
	case e.Kind > replicasync.KindPredicted || e.Model != "" || e.Priority != 0 || e.Class != 0:
		return wireVersion2
	}
	return wireVersion1
}

// lastKindOf is the newest kind a batch of the given version may carry.
func lastKindOf(version byte) replicasync.Kind {
	switch version {
	case wireVersion1:
		return replicasync.KindPredicted
	case wireVersion2:
		return replicasync.KindLeft
	}
	return replicasync.KindRefused
}

func appendEvent(dst []byte, e *replicasync.Event, version byte) []byte {
	dst = appendString(dst, e.Origin)
	dst = binary.AppendUvarint(dst, e.Seq)
	dst = binary.AppendUvarint(dst, e.Epoch)
	dst = append(dst, byte(e.Kind))
	dst = binary.AppendUvarint(dst, e.Request)
	var at int64
	if !e.At.IsZero() {
		at = e.At.UnixNano()
	}
	dst = binary.AppendVarint(dst, at)
	dst = appendString(dst, e.Endpoint)
	for _, v := range []int{e.Work.PromptTokens, e.Work.UncachedTokens, e.Work.ExpectedOutput, e.Work.BlockSize} {
		dst = binary.AppendUvarint(dst, uint64(max(v, 0)))
	}
	dst = appendHashes(dst, e.Work.Blocks)
	dst = appendHashes(dst, e.IndexChain)
	if version >= wireVersion2 {
		dst = appendString(dst, e.Model)
		dst = binary.AppendVarint(dst, int64(e.Priority))
		dst = binary.AppendVarint(dst, int64(e.Class))
	}
	return dst
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendHashes(dst []byte, hs []uint64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(hs)))
	for _, h := range hs {
		dst = binary.LittleEndian.AppendUint64(dst, h)
	}
	return dst
}

// encodedSize is an upper bound of e's encoded size, for splitting batches.
func encodedSize(e *replicasync.Event) int {
	return 100 + len(e.Origin) + len(e.Endpoint) + len(e.Model) + 8*(len(e.Work.Blocks)+len(e.IndexChain))
}

// decodeBatch parses one batch. It never panics and allocates no more than
// the input's length justifies; the result shares no memory with data.
func decodeBatch(data []byte) (*batch, error) {
	r := reader{buf: data}
	r.version = r.byte()
	if r.err == nil && (r.version < wireVersion1 || r.version > wireVersion) {
		return nil, fmt.Errorf("peer batch: unknown wire version %d (this build reads %d to %d)", r.version, wireVersion1, wireVersion)
	}
	b := &batch{Flags: r.byte()}
	n := r.count(minEventSize)
	if r.err == nil && n > 0 {
		b.Events = make([]replicasync.Event, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		r.event(&b.Events[i])
	}
	if r.err == nil && len(r.buf) > 0 {
		r.err = fmt.Errorf("%d trailing bytes", len(r.buf))
	}
	if r.err != nil {
		return nil, fmt.Errorf("peer batch: %w", r.err)
	}
	return b, nil
}

// minEventSize is the fewest bytes an event takes (one per field).
const minEventSize = 14

type reader struct {
	buf     []byte
	err     error
	version byte
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) byte() byte {
	if r.err != nil || len(r.buf) < 1 {
		r.fail(errShort)
		return 0
	}
	b := r.buf[0]
	r.buf = r.buf[1:]
	return b
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf)
	if n <= 0 {
		r.fail(errors.New("bad varint"))
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.buf)
	if n <= 0 {
		r.fail(errors.New("bad varint"))
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

// count reads a length whose items take at least unit bytes each.
func (r *reader) count(unit int) int {
	v := r.uvarint()
	if r.err == nil && v > uint64(len(r.buf)/unit) {
		r.fail(fmt.Errorf("count %d exceeds the %d bytes left", v, len(r.buf)))
		return 0
	}
	return int(v)
}

func (r *reader) str(field string) string {
	n := r.count(1)
	if r.err == nil && n > maxString {
		r.fail(fmt.Errorf("%s: %d bytes, at most %d", field, n, maxString))
	}
	if r.err != nil {
		return ""
	}
	s := string(r.buf[:n])
	r.buf = r.buf[n:]
	return s
}

func (r *reader) int(field string) int {
	v := r.uvarint()
	if r.err == nil && v >= maxInt {
		r.fail(fmt.Errorf("%s: %d out of range", field, v))
	}
	return int(v)
}

func (r *reader) hashes() []uint64 {
	n := r.count(8)
	if r.err != nil || n == 0 {
		return nil
	}
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = binary.LittleEndian.Uint64(r.buf[8*i:])
	}
	r.buf = r.buf[8*n:]
	return hs
}

func (r *reader) event(e *replicasync.Event) {
	e.Origin = r.str("origin")
	e.Seq = r.uvarint()
	e.Epoch = r.uvarint()
	e.Kind = replicasync.Kind(r.byte())
	if r.err == nil && (!e.Kind.Valid() || e.Kind > lastKindOf(r.version)) {
		r.fail(fmt.Errorf("unknown event kind %d in a version %d batch", e.Kind, r.version))
	}
	e.Request = r.uvarint()
	if at := r.varint(); at != 0 && at != math.MinInt64 {
		e.At = time.Unix(0, at)
	}
	e.Endpoint = r.str("endpoint")
	e.Work = activework.Work{PromptTokens: r.int("promptTokens"), UncachedTokens: r.int("uncachedTokens"),
		ExpectedOutput: r.int("expectedOutput"), BlockSize: r.int("blockSize")}
	e.Work.Blocks = r.hashes()
	e.IndexChain = r.hashes()
	if r.version >= wireVersion2 {
		e.Model = r.str("model")
		e.Priority = r.smallInt("priority")
		e.Class = r.smallInt("class")
	}
}

// smallInt reads a signed varint that must fit in ±maxInt.
func (r *reader) smallInt(field string) int {
	v := r.varint()
	if r.err == nil && (v >= maxInt || v <= -maxInt) {
		r.fail(fmt.Errorf("%s: %d out of range", field, v))
		return 0
	}
	return int(v)
}
