package kvevents

import (
	"fmt"

	"github.com/cespare/xxhash/v2"
)

// loraOrMetadata reads BlockStored's 8th positional field. vLLM puts
// lora_name (str | None) there; SGLang's salted BlockStored puts its metadata
// struct ({cache_salt, ...}) there instead.
func (r *reader) loraOrMetadata(f *eventFields) (err error) {
	c, err := r.peek()
	if err != nil {
		return err
	}
	if isMap(c) {
		f.cacheSalt, err = r.metadata()
		return err
	}
	f.loraName, err = r.optStr()
	return err
}

// metadata reads SGLang's BlockStored metadata, a map (or nil) of which only
// cache_salt matters for block identity; other keys are skipped.
func (r *reader) metadata() (salt string, err error) {
	if isNil, err := r.takeNil(); isNil || err != nil {
		return "", err
	}
	c, err := r.peek()
	if err != nil {
		return "", err
	}
	if !isMap(c) {
		return "", malformed("metadata: want map, got %s", codeName(c))
	}
	n, err := r.mapLen()
	if err != nil {
		return "", err
	}
	for i := 0; i < n; i++ {
		key, err := r.str()
		if err != nil {
			return "", fmt.Errorf("metadata key: %w", err)
		}
		if key == fieldCacheSalt {
			salt, err = r.optStr()
		} else {
			err = r.skip()
		}
		if err != nil {
			return "", fmt.Errorf("metadata %s: %w", key, err)
		}
	}
	return salt, nil
}

// extraKeys reads vLLM's per-block extra_keys (a list of tuple | None) as one
// digest per block: XXH64 of the entry's msgpack bytes, forced non-zero, and
// 0 for None. The digest is an identity, not a value anyone reproduces: equal
// keys give equal digests, different keys different ones.
func (r *reader) extraKeys() ([]uint64, error) {
	n, err := r.arrayLen()
	if err != nil || n == 0 {
		return nil, err
	}
	ks := make([]uint64, n)
	for i := range ks {
		if ks[i], err = r.extraKey(); err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return ks, nil
}

func (r *reader) extraKey() (uint64, error) {
	if isNil, err := r.takeNil(); isNil || err != nil {
		return 0, err
	}
	start := r.offset()
	if err := r.skip(); err != nil {
		return 0, err
	}
	return xxhash.Sum64(r.p[start:r.offset()]) | 1, nil
}

func (r *reader) groupIdx() (int, error) {
	p, err := r.optInt()
	if err != nil || p == nil {
		return 0, err
	}
	if *p < 0 || *p > maxGroupIdx {
		return 0, malformed("group_idx %d out of range [0, %d]", *p, maxGroupIdx)
	}
	return *p, nil
}

// maxGroupIdx bounds KV cache groups; real hybrid models have a handful.
const maxGroupIdx = 255
