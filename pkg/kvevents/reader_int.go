package kvevents

import (
	"encoding/binary"
	"io"

	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// rawInt reads a msgpack integer straight from the payload, bypassing the
// Decoder: token lists are most of a batch and this is their hot path. It
// returns the value's low 64 bits and whether the wire type was unsigned.
func (r *reader) rawInt() (v uint64, unsigned bool, err error) {
	v, unsigned, n, err := parseInt(r.p, len(r.p)-r.r.Len())
	if err != nil {
		return 0, false, err
	}
	_, err = r.r.Seek(int64(n), io.SeekCurrent)
	return v, unsigned, err
}

// parseInt decodes the integer at p[off:] and returns its encoded length n.
func parseInt(p []byte, off int) (v uint64, unsigned bool, n int, err error) {
	if off >= len(p) {
		return 0, false, 0, malformed("truncated: want integer")
	}
	c := p[off]
	if msgpcode.IsFixedNum(c) {
		return uint64(int64(int8(c))), c <= msgpcode.PosFixedNumHigh, 1, nil
	}
	size, signed := intWidth(c)
	if size == 0 {
		return 0, false, 0, malformed("want integer, got %s", codeName(c))
	}
	if off+1+size > len(p) {
		return 0, false, 0, malformed("truncated integer")
	}
	return beUint(p[off+1:off+1+size], signed), !signed, 1 + size, nil
}

// intWidth gives the body size of an integer type code (0 if c is not one).
func intWidth(c byte) (size int, signed bool) {
	switch c {
	case msgpcode.Uint8, msgpcode.Int8:
		size = 1
	case msgpcode.Uint16, msgpcode.Int16:
		size = 2
	case msgpcode.Uint32, msgpcode.Int32:
		size = 4
	case msgpcode.Uint64, msgpcode.Int64:
		size = 8
	}
	return size, c >= msgpcode.Int8 && c <= msgpcode.Int64
}

// beUint decodes a big-endian integer, sign-extending signed ones to 64 bits.
func beUint(b []byte, signed bool) uint64 {
	switch len(b) {
	case 1:
		if signed {
			return uint64(int64(int8(b[0])))
		}
		return uint64(b[0])
	case 2:
		if signed {
			return uint64(int64(int16(binary.BigEndian.Uint16(b))))
		}
		return uint64(binary.BigEndian.Uint16(b))
	case 4:
		if signed {
			return uint64(int64(int32(binary.BigEndian.Uint32(b))))
		}
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}
