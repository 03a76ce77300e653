package kvevents

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Wire field names (msgspec struct field names).
const (
	fieldType       = "type"
	fieldTS         = "ts"
	fieldEvents     = "events"
	fieldDPRank     = "data_parallel_rank"
	fieldHashes     = "block_hashes"
	fieldParent     = "parent_block_hash"
	fieldTokenIDs   = "token_ids"
	fieldBlockSize  = "block_size"
	fieldLoRAID     = "lora_id"
	fieldMedium     = "medium"
	fieldLoRAName   = "lora_name"
	fieldExtraKeys  = "extra_keys"
	fieldGroupIdx   = "group_idx"
	fieldSpecKind   = "kv_cache_spec_kind"
	fieldMetadata   = "metadata"
	fieldCacheSalt  = "cache_salt"
	maxEncodeEvents = 1 << 24
)

// Encode serialises b as msgpack the way vLLM's msgspec encoder lays it out in
// the chosen encoding: optional fields with defaults (dp rank, lora name) are
// omitted when unset, required nullable ones are written as nil. Hashes are
// written as unsigned integers. It returns an error for nil or foreign events.
func Encode(b Batch, enc Encoding) ([]byte, error) {
	return EncodeWith(b, EncodeOptions{Encoding: enc})
}

// EncodeOptions selects a wire dialect for EncodeWith.
type EncodeOptions struct {
	Encoding Encoding
	// BytesHashes writes block hashes as 32-byte strings (the hash in the last
	// 8 bytes, big-endian), as vLLM does with its sha256 hashers and CPU offload.
	BytesHashes bool
}

// EncodeWith is Encode with the dialect's details chosen by o.
func EncodeWith(b Batch, o EncodeOptions) ([]byte, error) {
	var buf bytes.Buffer
	w := &writer{e: msgpack.NewEncoder(&buf), bytesHashes: o.BytesHashes}
	switch o.Encoding {
	case EncodingArray:
		w.batchArray(b, w.eventArray)
	case EncodingMap:
		w.batchMap(b)
	case EncodingMixed:
		w.batchArray(b, w.eventMap)
	default:
		return nil, fmt.Errorf("kvevents: encode: unknown encoding %d", o.Encoding)
	}
	if w.err != nil {
		return nil, fmt.Errorf("kvevents: encode: %w", w.err)
	}
	return buf.Bytes(), nil
}

// writer wraps the msgpack encoder with a sticky error so the layout code
// reads as a flat list of fields.
type writer struct {
	e           *msgpack.Encoder
	err         error
	bytesHashes bool
}

func (w *writer) do(err error) {
	if w.err == nil {
		w.err = err
	}
}

func (w *writer) arrayLen(n int) { w.do(w.e.EncodeArrayLen(n)) }
func (w *writer) mapLen(n int)   { w.do(w.e.EncodeMapLen(n)) }
func (w *writer) str(s string)   { w.do(w.e.EncodeString(s)) }
func (w *writer) uint(n uint64)  { w.do(w.e.EncodeUint(n)) }
func (w *writer) int(n int)      { w.do(w.e.EncodeInt(int64(n))) }

// optStr writes s, or nil when s is empty (msgspec `str | None`).
func (w *writer) optStr(s string) {
	if s == "" {
		w.do(w.e.EncodeNil())
		return
	}
	w.str(s)
}

func (w *writer) optInt(p *int) {
	if p == nil {
		w.do(w.e.EncodeNil())
		return
	}
	w.int(*p)
}

func (w *writer) optHash(p *uint64) {
	if p == nil {
		w.do(w.e.EncodeNil())
		return
	}
	w.hash(*p)
}

func (w *writer) hashes(hs []uint64) {
	w.arrayLen(len(hs))
	for _, h := range hs {
		w.hash(h)
	}
}

func (w *writer) hash(h uint64) {
	if !w.bytesHashes {
		w.uint(h)
		return
	}
	var b [32]byte
	binary.BigEndian.PutUint64(b[24:], h)
	w.do(w.e.EncodeBytes(b[:]))
}

func (w *writer) tokens(ts []uint32) {
	w.arrayLen(len(ts))
	for _, t := range ts {
		w.uint(uint64(t))
	}
}

func (w *writer) batchArray(b Batch, event func(Event)) {
	n := 2
	if b.DPRank != nil {
		n = 3
	}
	w.arrayLen(n)
	w.do(w.e.EncodeFloat64(b.TS))
	w.events(b.Events, event)
	if b.DPRank != nil {
		w.int(*b.DPRank)
	}
}

func (w *writer) batchMap(b Batch) {
	n := 2
	if b.DPRank != nil {
		n = 3
	}
	w.mapLen(n)
	w.str(fieldTS)
	w.do(w.e.EncodeFloat64(b.TS))
	w.str(fieldEvents)
	w.events(b.Events, w.eventMap)
	if b.DPRank != nil {
		w.str(fieldDPRank)
		w.int(*b.DPRank)
	}
}

func (w *writer) events(es []Event, one func(Event)) {
	if len(es) > maxEncodeEvents {
		w.do(fmt.Errorf("%d events exceed the limit %d", len(es), maxEncodeEvents))
		return
	}
	w.arrayLen(len(es))
	for i, e := range es {
		one(e)
		if w.err != nil {
			w.err = fmt.Errorf("events[%d]: %w", i, w.err)
			return
		}
	}
}

// deref turns pointer events into values so layout code handles one form.
func deref(e Event) (Event, error) {
	switch v := e.(type) {
	case BlockStored, BlockRemoved, AllBlocksCleared:
		return v, nil
	case *BlockStored:
		if v != nil {
			return *v, nil
		}
	case *BlockRemoved:
		if v != nil {
			return *v, nil
		}
	case *AllBlocksCleared:
		if v != nil {
			return *v, nil
		}
	}
	return nil, fmt.Errorf("unsupported event %T", e)
}
