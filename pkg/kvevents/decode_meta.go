package kvevents

import (
	"fmt"

	"github.com/cespare/xxhash/v2"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
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
// keys give equal digests, different keys different ones. vLLM puts a LoRA
// request's adapter name first in every block's keys; kvpick folds the
// adapter into the chain's seed instead (as requests do), so a leading
// element equal to lora (when set) is left out, and a tuple of nothing else
// is no key at all (keys that only name the adapter read as nil).
func (r *reader) extraKeys(lora string) ([]uint64, error) {
	n, err := r.arrayLen()
	if err != nil || n == 0 {
		return nil, err
	}
	ks, adapterOnly := make([]uint64, n), 0
	for i := range ks {
		var only bool
		if ks[i], only, err = r.extraKey(lora); err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		if only {
			adapterOnly++
		}
	}
	if adapterOnly == n {
		return nil, nil
	}
	return ks, nil
}

// extraKey reads one block's entry; adapterOnly is true when it names the
// adapter and nothing else.
func (r *reader) extraKey(lora string) (digest uint64, adapterOnly bool, err error) {
	if isNil, err := r.takeNil(); isNil || err != nil {
		return 0, false, err
	}
	start := r.offset()
	if rest, ok, err := r.afterAdapter(lora); err != nil || ok {
		return rest, ok && rest == 0, err
	}
	r.seek(start)
	if err := r.skip(); err != nil {
		return 0, false, err
	}
	return xxhash.Sum64(r.p[start:r.offset()]) | 1, false, nil
}

// afterAdapter reads a keys tuple that starts with the adapter name lora and
// returns the digest of the elements after it (0 when none); ok is false,
// with the reader anywhere inside the entry, when the entry is not such a
// tuple.
func (r *reader) afterAdapter(lora string) (digest uint64, ok bool, err error) {
	c, err := r.peek()
	if lora == "" || err != nil || !isArray(c) {
		return 0, false, nil
	}
	n, err := r.arrayLen()
	if err != nil || n == 0 {
		return 0, false, nil
	}
	if c, err = r.peek(); err != nil || !msgpcode.IsString(c) {
		return 0, false, nil
	}
	if first, err := r.str(); err != nil || first != lora {
		return 0, false, nil
	}
	from := r.offset()
	for j := 1; j < n; j++ {
		if err := r.skip(); err != nil {
			return 0, true, err
		}
	}
	if n == 1 {
		return 0, true, nil
	}
	return xxhash.Sum64(r.p[from:r.offset()]) | 1, true, nil
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
