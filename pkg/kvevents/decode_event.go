package kvevents

import (
	"fmt"
	"io"
)

// positional lists each known event's fields in msgspec declaration order.
var positional = map[string][]string{
	TagBlockStored: {fieldHashes, fieldParent, fieldTokenIDs, fieldBlockSize, fieldLoRAID, fieldMedium,
		fieldLoRAName, fieldExtraKeys, fieldGroupIdx, fieldSpecKind},
	TagBlockRemoved:     {fieldHashes, fieldMedium, fieldGroupIdx},
	TagAllBlocksCleared: {},
}

// eventFields collects the union of all known events' fields; the tag picks
// which of them make the event.
type eventFields struct {
	hashes    []uint64
	parent    *uint64
	tokens    []uint32
	blockSize int
	loraID    *int
	medium    string
	loraName  string
	extraKeys []uint64
	cacheSalt string
	groupIdx  int
	specKind  string
}

// event reads one event; it returns nil (and no error) for an unknown tag.
func (r *reader) event() (Event, error) {
	c, err := r.peek()
	if err != nil {
		return nil, err
	}
	switch {
	case isArray(c):
		return r.eventArray()
	case isMap(c):
		return r.eventMap()
	}
	return nil, malformed("want array or map, got %s", codeName(c))
}

// eventArray reads [tag, field...]; missing trailing fields keep defaults.
func (r *reader) eventArray() (Event, error) {
	n, err := r.arrayLen()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, malformed("empty event array")
	}
	tag, err := r.str()
	if err != nil {
		return nil, fmt.Errorf("tag: %w", err)
	}
	order, known := positional[tag]
	if !known {
		return nil, r.skipN(n - 1)
	}
	var f eventFields
	for i := 1; i < n; i++ {
		if i-1 >= len(order) {
			return f.build(tag), r.skipN(n - i)
		}
		if err := r.field(&f, order[i-1]); err != nil {
			return nil, fmt.Errorf("%s %s: %w", tag, order[i-1], err)
		}
	}
	return f.build(tag), nil
}

// eventMap reads {"type": tag, field: value, ...} in any key order.
func (r *reader) eventMap() (Event, error) {
	n, err := r.mapLen()
	if err != nil {
		return nil, err
	}
	tag, err := r.mapTag(n)
	if err != nil {
		return nil, err
	}
	if _, known := positional[tag]; !known {
		return nil, r.skipN(2 * n)
	}
	var f eventFields
	for i := 0; i < n; i++ {
		key, err := r.str()
		if err != nil {
			return nil, fmt.Errorf("key: %w", err)
		}
		if key == fieldType {
			err = r.skip()
		} else {
			err = r.field(&f, key)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	return f.build(tag), nil
}

// mapTag finds the "type" value among the n pairs that follow and rewinds,
// so fields are decoded knowing the tag wherever msgspec (or anyone) put it.
func (r *reader) mapTag(n int) (string, error) {
	start, _ := r.r.Seek(0, io.SeekCurrent)
	defer r.r.Seek(start, io.SeekStart) //nolint:errcheck // rewinding within the buffer cannot fail
	for i := 0; i < n; i++ {
		key, err := r.str()
		if err != nil {
			return "", fmt.Errorf("key: %w", err)
		}
		if key != fieldType {
			if err := r.skip(); err != nil {
				return "", fmt.Errorf("%s: %w", key, err)
			}
			continue
		}
		tag, err := r.str()
		if err != nil {
			return "", fmt.Errorf("type: %w", err)
		}
		return tag, nil
	}
	return "", malformed("event map without %q", fieldType)
}

// field decodes one named field into f; unknown names are skipped.
func (r *reader) field(f *eventFields, name string) (err error) {
	switch name {
	case fieldHashes:
		f.hashes, err = r.hashList()
	case fieldParent:
		f.parent, err = r.optHash()
	case fieldTokenIDs:
		f.tokens, err = r.tokenList()
	case fieldBlockSize:
		f.blockSize, err = r.blockSize()
	case fieldLoRAID:
		f.loraID, err = r.optInt()
	case fieldMedium:
		f.medium, err = r.optStr()
	case fieldLoRAName:
		err = r.loraOrMetadata(f)
	case fieldMetadata:
		f.cacheSalt, err = r.metadata()
	case fieldExtraKeys:
		f.extraKeys, err = r.extraKeys(f.loraName)
	case fieldGroupIdx:
		f.groupIdx, err = r.groupIdx()
	case fieldSpecKind:
		f.specKind, err = r.optStr()
	default:
		err = r.skip()
	}
	return err
}

func (f *eventFields) build(tag string) Event {
	switch tag {
	case TagBlockStored:
		return BlockStored{BlockHashes: f.hashes, Parent: f.parent, TokenIDs: f.tokens,
			BlockSize: f.blockSize, LoRAID: f.loraID, Medium: f.medium, LoRAName: f.loraName,
			ExtraKeys: f.extraKeys, CacheSalt: f.cacheSalt, GroupIdx: f.groupIdx, SpecKind: f.specKind}
	case TagBlockRemoved:
		return BlockRemoved{BlockHashes: f.hashes, Medium: f.medium, GroupIdx: f.groupIdx}
	case TagAllBlocksCleared:
		return AllBlocksCleared{}
	}
	return nil
}

func (r *reader) hashList() ([]uint64, error) {
	n, err := r.arrayLen()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	hs := make([]uint64, n)
	for i := range hs {
		if hs[i], err = r.hash(); err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return hs, nil
}

func (r *reader) tokenList() ([]uint32, error) {
	n, err := r.arrayLen()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	ts := make([]uint32, n)
	off := len(r.p) - r.r.Len()
	for i := range ts {
		v, unsigned, size, err := parseInt(r.p, off)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		if v > 1<<32-1 || (!unsigned && int64(v) < 0) {
			return nil, malformed("[%d]: token id %d out of range", i, int64(v))
		}
		ts[i] = uint32(v)
		off += size
	}
	_, err = r.r.Seek(int64(off), io.SeekStart)
	return ts, err
}

func (r *reader) blockSize() (int, error) {
	n, err := r.int()
	if err == nil && n < 0 {
		return 0, malformed("negative block size %d", n)
	}
	return n, err
}
