package kvindex

import (
	"fmt"
	"strings"
	"time"
)

// Tier is where an engine keeps a block. A block on one tier says nothing
// about the others: a CPU-tier removal leaves the GPU copy in place.
type Tier uint8

// Tiers, fastest first.
const (
	TierGPU      Tier = iota // vLLM and SGLang "GPU" (and events that name no medium)
	TierHost                 // vLLM "CPU" (offload), SGLang "CPU_PINNED", "CPU_TIER1", "CPU_TIER2"
	TierDisk                 // SGLang "DISK"
	TierExternal             // SGLang "EXTERNAL" and any medium not known here
)

// TierOf maps an event's medium to its tier.
func TierOf(medium string) Tier {
	switch m := strings.ToUpper(medium); {
	case m == "" || m == "GPU":
		return TierGPU
	case strings.HasPrefix(m, "CPU"):
		return TierHost
	case m == "DISK":
		return TierDisk
	}
	return TierExternal
}

// String names the tier as metrics and logs label it.
func (t Tier) String() string {
	return [...]string{"gpu", "host", "disk", "external"}[min(t, TierExternal)]
}

// Stored is one engine BlockStored as the index applies it.
type Stored struct {
	// Seed starts the chain when Parent is nil (see Seed).
	Seed uint64
	// Parent is the engine hash of the block before the first one (nil at a sequence start).
	Parent *uint64
	// EngineHashes are the engine's hashes of the stored blocks.
	EngineHashes []uint64
	// Tokens cover the event's full blocks. When they cover more blocks than
	// EngineHashes lists, the store is sparse: the engine left null blocks
	// (outside a sliding window, Mamba alignment) out, and the listed hashes
	// are taken to be the last blocks of the range, the ones a later event
	// names as parent.
	Tokens    []uint32
	BlockSize int
	// ExtraKeys has one digest per engine hash (0: none) or is nil; a block
	// with keys (cache salt, multimodal hashes) is a different block from one
	// with the same tokens and other keys.
	ExtraKeys []uint64
	// Group is the KV cache group; Tier the medium. Match looks up group 0
	// on the GPU tier, MatchCredited also the slower tiers of group 0; each
	// group and tier is kept apart so its removals never touch another.
	Group int
	Tier  Tier
}

// engineKey names an engine block within its group and tier (engines reuse
// one hash for a block's copies on several tiers and groups): the hash itself
// in namespace 0, else the hash mixed with the namespace.
func engineKey(h uint64, ns uint32) uint64 {
	if ns == 0 {
		return h
	}
	return link(h, ^uint64(ns))
}

// engineRef is what an engine hash stands for: our chain hash, and the
// namespace whose entry it is.
type engineRef struct {
	own uint64
	ns  uint32
}

func namespace(group int, t Tier) uint32 { return uint32(group)<<8 | uint32(t) }

// nsDomain separates namespaces' entries; group 0 on the GPU tier keeps the
// chain hash itself, so requests hashed with Seed match it.
const nsDomain = 0x6b7670696b6e7301

// entryOf is the index entry of chain hash h in namespace ns. Entries are
// derived per block from the one chain (parents always chain on the plain
// hash), so a request's chain for another tier is one mix per block away.
func entryOf(h uint64, ns uint32) uint64 {
	if ns == 0 {
		return h
	}
	return link(h, nsDomain^uint64(ns))
}

// TierChain appends to dst the entries the index holds, on tier t of group 0,
// for a request's chain (as BlockHashes returns it).
func TierChain(dst, chain []uint64, t Tier) []uint64 {
	ns := namespace(0, t)
	for _, h := range chain {
		dst = append(dst, entryOf(h, ns))
	}
	return dst
}

// ApplyStoredBlocks applies an engine BlockStored. It returns
// ErrUnknownParent (and stores nothing) when the parent is not a known engine
// hash of the endpoint in the same group and tier, or an error naming the
// cause when the event is inconsistent; nothing is stored then either.
func (ix *Index) ApplyStoredBlocks(endpoint string, s Stored, now time.Time) error {
	n := len(s.EngineHashes)
	if n == 0 {
		return nil
	}
	if err := s.check(endpoint); err != nil {
		return err
	}
	ns := namespace(s.Group, s.Tier)
	ep := ix.reg.getOrCreate(endpoint)
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.dead {
		return nil
	}
	start := s.Seed
	if s.Parent != nil {
		ref, ok := ep.engine.get(engineKey(*s.Parent, ns))
		own := ref.own
		if !ok {
			ix.unknownParent.Add(1)
			return fmt.Errorf("kvindex: stored event for %s, parent %#x: %w", endpoint, *s.Parent, ErrUnknownParent)
		}
		start = own
	}
	full := len(s.Tokens) / s.BlockSize
	ep.scratch = chainWithKeys(ep.scratch[:0], start, s.Tokens[:full*s.BlockSize], s.BlockSize, s.ExtraKeys, full-n)
	for i := n - 1; i >= 0; i-- {
		own := ep.scratch[full-n+i]
		v, _ := ep.engine.upsert(engineKey(s.EngineHashes[i], ns))
		*v = engineRef{own, ns}
		ep.upsert(entryOf(own, ns), true)
	}
	if ns != 0 {
		ix.tiered.Store(true)
		ep.multiNS = true
	}
	ix.settle(ep)
	return nil
}

func (s *Stored) check(endpoint string) error {
	n := len(s.EngineHashes)
	switch {
	case s.BlockSize <= 0 || len(s.Tokens)/n < s.BlockSize: // division: no overflow on wire values
		return fmt.Errorf("kvindex: stored event for %s: %d tokens for %d blocks of %d", endpoint, len(s.Tokens), n, s.BlockSize)
	case s.ExtraKeys != nil && len(s.ExtraKeys) != n:
		return fmt.Errorf("kvindex: stored event for %s: %d extra keys for %d blocks", endpoint, len(s.ExtraKeys), n)
	case s.Group < 0 || s.Group > 0xffffff:
		return fmt.Errorf("kvindex: stored event for %s: group %d out of range", endpoint, s.Group)
	}
	return nil
}

// chainWithKeys is BlockHashes with block off+j's extra key keys[j] (when
// non-zero) linked in after its tokens, so keyed blocks and their
// descendants differ from unkeyed ones.
func chainWithKeys(dst []uint64, seed uint64, tokens []uint32, blockSize int, keys []uint64, off int) []uint64 {
	if keys == nil {
		return BlockHashes(dst, seed, tokens, blockSize)
	}
	h := seed
	for i := 0; i < len(tokens)/blockSize; i++ {
		h = link(h, xxh64Tokens(0, tokens[i*blockSize:(i+1)*blockSize]))
		if j := i - off; j >= 0 && keys[j] != 0 {
			h = link(h, keys[j])
		}
		dst = append(dst, h)
	}
	return dst
}

// ApplyRemovedBlocks applies an engine BlockRemoved for one group and tier;
// hashes unknown there are ignored.
func (ix *Index) ApplyRemovedBlocks(endpoint string, group int, t Tier, engineHashes []uint64) {
	ep := ix.reg.get(endpoint)
	if ep == nil {
		return
	}
	ns := namespace(group, t)
	ep.mu.Lock()
	defer ep.mu.Unlock()
	for _, eh := range engineHashes {
		k := engineKey(eh, ns)
		if ref, ok := ep.engine.get(k); ok {
			ep.engine.del(k)
			ep.drop(entryOf(ref.own, ns))
		}
	}
	ep.compact()
	ep.flush(ix.s)
}
