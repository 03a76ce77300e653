package kvevents

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// ErrMalformed marks payloads that are not a valid event batch.
var ErrMalformed = errors.New("malformed kv event payload")

// reader decodes msgpack primitives with every length checked against the
// bytes left, so a hostile header cannot make it allocate more than a small
// multiple of the payload. The msgpack Decoder reads the bytes.Reader directly
// (it implements io.ByteScanner, so the Decoder adds no buffering), which lets
// reader seek and read raw bytes in between.
type reader struct {
	p []byte
	r *bytes.Reader
	d *msgpack.Decoder
}

func newReader(p []byte) *reader {
	br := bytes.NewReader(p)
	return &reader{p: p, r: br, d: msgpack.NewDecoder(br)}
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrMalformed)
}

func (r *reader) remaining() int { return r.r.Len() }

// offset is the position of the next unread byte in p.
func (r *reader) offset() int { return len(r.p) - r.r.Len() }

// seek moves to position off of p (within bounds by construction).
func (r *reader) seek(off int) { _, _ = r.r.Seek(int64(off), io.SeekStart) }

func (r *reader) peek() (byte, error) {
	c, err := r.d.PeekCode()
	if err != nil {
		return 0, malformed("truncated: %v", err)
	}
	return c, nil
}

// takeNil consumes a nil and reports whether there was one.
func (r *reader) takeNil() (bool, error) {
	c, err := r.peek()
	if err != nil || c != msgpcode.Nil {
		return false, err
	}
	return true, r.d.DecodeNil()
}

// checkLen rejects a container or string length the remaining bytes cannot hold
// (every element takes at least minSize bytes).
func (r *reader) checkLen(n, minSize int) error {
	if n < 0 || n > r.remaining()/minSize {
		return malformed("length %d exceeds the %d bytes left", n, r.remaining())
	}
	return nil
}

// arrayLen reads an array header; nil reads as an empty array.
func (r *reader) arrayLen() (int, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	if !isArray(c) && c != msgpcode.Nil {
		return 0, malformed("want array, got %s", codeName(c))
	}
	n, err := r.d.DecodeArrayLen()
	if err != nil {
		return 0, malformed("array header: %v", err)
	}
	if n < 0 {
		return 0, nil
	}
	return n, r.checkLen(n, 1)
}

func (r *reader) mapLen() (int, error) {
	n, err := r.d.DecodeMapLen()
	if err != nil {
		return 0, malformed("map header: %v", err)
	}
	return n, r.checkLen(n, 2)
}

// rawBytes reads a str or bin body without trusting its declared length.
func (r *reader) rawBytes() ([]byte, error) {
	c, err := r.peek()
	if err != nil {
		return nil, err
	}
	if !msgpcode.IsString(c) && !msgpcode.IsBin(c) {
		return nil, malformed("want string or bytes, got %s", codeName(c))
	}
	n, err := r.d.DecodeBytesLen()
	if err != nil {
		return nil, malformed("string header: %v", err)
	}
	if err := r.checkLen(n, 1); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	_, err = io.ReadFull(r.r, b)
	return b, err
}

func (r *reader) str() (string, error) {
	b, err := r.rawBytes()
	return string(b), err
}

// optStr reads `str | None`; None reads as "".
func (r *reader) optStr() (string, error) {
	if isNil, err := r.takeNil(); isNil || err != nil {
		return "", err
	}
	return r.str()
}

func (r *reader) int64() (int64, error) {
	v, unsigned, err := r.rawInt()
	if err != nil {
		return 0, err
	}
	if unsigned && v > math.MaxInt64 {
		return 0, malformed("integer %d overflows int64", v)
	}
	return int64(v), nil
}

func (r *reader) int() (int, error) {
	n, err := r.int64()
	if err == nil && (n > math.MaxInt32 || n < math.MinInt32) {
		return 0, malformed("integer %d out of range", n)
	}
	return int(n), err
}

func (r *reader) optInt() (*int, error) {
	if isNil, err := r.takeNil(); isNil || err != nil {
		return nil, err
	}
	n, err := r.int()
	if err != nil {
		return nil, err
	}
	return &n, nil
}

func (r *reader) float() (float64, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	if c != msgpcode.Float && c != msgpcode.Double && !isInt(c) {
		return 0, malformed("want number, got %s", codeName(c))
	}
	f, err := r.d.DecodeFloat64()
	if err != nil {
		return 0, malformed("number: %v", err)
	}
	return f, nil
}

// hash reads an engine block hash: an integer (its low 64 bits, so negative
// ints wrap) or raw bytes (the last 8 bytes, big-endian).
func (r *reader) hash() (uint64, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	if isInt(c) {
		h, _, err := r.rawInt()
		return h, err
	}
	b, err := r.rawBytes()
	if err != nil {
		return 0, fmt.Errorf("hash: %w", err)
	}
	return hashFromBytes(b), nil
}

// hashFromBytes takes the last 8 bytes big-endian, zero-padding shorter input.
func hashFromBytes(b []byte) uint64 {
	var tail [8]byte
	if len(b) > 8 {
		b = b[len(b)-8:]
	}
	copy(tail[8-len(b):], b)
	return binary.BigEndian.Uint64(tail[:])
}

func (r *reader) optHash() (*uint64, error) {
	if isNil, err := r.takeNil(); isNil || err != nil {
		return nil, err
	}
	h, err := r.hash()
	if err != nil {
		return nil, err
	}
	return &h, nil
}
