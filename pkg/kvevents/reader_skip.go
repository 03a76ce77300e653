package kvevents

import (
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

func isInt(c byte) bool {
	return msgpcode.IsFixedNum(c) || (c >= msgpcode.Uint8 && c <= msgpcode.Int64)
}

func isArray(c byte) bool {
	return msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32
}

func isMap(c byte) bool {
	return msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32
}

// codeName describes a msgpack type code for error messages.
func codeName(c byte) string {
	switch {
	case isInt(c):
		return "integer"
	case isArray(c):
		return "array"
	case isMap(c):
		return "map"
	case msgpcode.IsString(c):
		return "string"
	case msgpcode.IsBin(c):
		return "bytes"
	case c == msgpcode.Nil:
		return "nil"
	case c == msgpcode.True || c == msgpcode.False:
		return "bool"
	case c == msgpcode.Float || c == msgpcode.Double:
		return "float"
	case msgpcode.IsExt(c):
		return "ext"
	}
	return fmt.Sprintf("code 0x%02x", c)
}

// skip discards one value of any type. It is iterative (a count of values
// still owed) so deeply nested hostile input cannot grow the stack, and every
// length is checked before it is trusted.
func (r *reader) skip() error {
	for pending := 1; pending > 0; pending-- {
		more, err := r.skipHeader()
		if err != nil {
			return err
		}
		if more > r.remaining()-pending+1 {
			return malformed("length %d exceeds the %d bytes left", more, r.remaining())
		}
		pending += more
	}
	return nil
}

// skipHeader consumes one value's header (and body, for scalars and strings)
// and returns how many nested values follow it.
func (r *reader) skipHeader() (int, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	switch {
	case isArray(c):
		return r.arrayLen()
	case isMap(c):
		n, err := r.mapLen()
		return 2 * n, err
	case msgpcode.IsString(c), msgpcode.IsBin(c):
		return 0, r.skipBytes()
	case msgpcode.IsExt(c):
		return 0, r.skipExt()
	}
	if err := r.d.Skip(); err != nil { // fixed-size scalars only
		return 0, malformed("skip %s: %v", codeName(c), err)
	}
	return 0, nil
}

func (r *reader) skipBytes() error {
	n, err := r.d.DecodeBytesLen()
	if err != nil {
		return malformed("string header: %v", err)
	}
	return r.discard(n)
}

func (r *reader) skipExt() error {
	_, n, err := r.d.DecodeExtHeader()
	if err != nil {
		return malformed("ext header: %v", err)
	}
	return r.discard(n)
}

func (r *reader) discard(n int) error {
	if err := r.checkLen(n, 1); err != nil {
		return err
	}
	_, err := r.r.Seek(int64(n), io.SeekCurrent)
	return err
}
