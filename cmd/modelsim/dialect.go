package main

import "github.com/kvpick/kvpick/pkg/kvevents"

// dialect dresses modelsim's events as a particular engine version sends
// them, so the picker's decoders meet every shape it must understand.
type dialect struct {
	// salt is stamped on every BlockStored as SGLang's metadata {cache_salt}.
	salt string
	// hybrid adds current vLLM's hybrid-model fields: every store carries
	// extra_keys (None per block: no salt or multimodal input), group_idx 0
	// and kv_cache_spec_kind full_attention, and is followed by the same
	// blocks in sliding-window group 1, which at once leave the window
	// (BlockRemoved in group 1, with the same engine hashes).
	hybrid bool
	// offload writes every stored block through to the CPU tier as vLLM's
	// offloading connector reports it (a second BlockStored, medium "CPU");
	// GPU evictions remove the GPU copy only, so the CPU copy outlives it.
	offload bool
}

// SpecFullAttention and SpecSlidingWindow are vLLM's kv_cache_spec_kind values.
const (
	SpecFullAttention = "full_attention"
	SpecSlidingWindow = "sliding_window"
)

func (d dialect) apply(b kvevents.Batch) kvevents.Batch {
	if d.salt == "" && !d.hybrid && !d.offload {
		return b
	}
	out := make([]kvevents.Event, 0, len(b.Events))
	for _, e := range b.Events {
		s, ok := e.(kvevents.BlockStored)
		if !ok {
			out = append(out, e)
			continue
		}
		s.CacheSalt = d.salt
		if d.offload {
			cpu := s
			cpu.Medium = "CPU"
			out = append(out, cpu)
		}
		if !d.hybrid {
			out = append(out, s)
			continue
		}
		s.ExtraKeys, s.SpecKind = make([]uint64, len(s.BlockHashes)), SpecFullAttention
		window := s
		window.GroupIdx, window.SpecKind = 1, SpecSlidingWindow
		out = append(out, s, window, kvevents.BlockRemoved{BlockHashes: s.BlockHashes, Medium: s.Medium, GroupIdx: 1})
	}
	b.Events = out
	return b
}
