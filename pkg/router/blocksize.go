package router

import (
	"slices"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/kvindex"
)

// sizeView is the block size each endpoint's prefix view is hashed at: the
// size its KV events state, else its configured or scraped capacity, else
// kv.blockSize. It is derived from the candidate set, the feed and the
// scraped load, and rebuilt when one of them may have changed (a new
// snapshot, a feed version, a Tick), so a decision pays one atomic load.
type sizeView struct {
	snap    *endpoints.Snapshot
	version uint64 // the feed's
	gen     uint64 // r.tickGen
	// of maps endpoints not at kv.blockSize to their size; nil when every
	// endpoint is at kv.blockSize (the common case costs nothing per lookup).
	of map[string]int
	// extra lists the distinct sizes other than kv.blockSize, ascending.
	extra []int
}

// size is endpoint's block size under v.
func (v *sizeView) size(endpoint string, def int) int {
	if s, ok := v.of[endpoint]; ok {
		return s
	}
	return def
}

// blockSizes returns the current view, rebuilding it when stale; nil on the
// predicted path, where every view is hashed at kv.blockSize: the chains are
// the picker's own, so they need not be the engine's.
func (r *Router) blockSizes() *sizeView {
	if r.cfg.KV.Observation == v1.ObservePredicted {
		return nil
	}
	snap := r.deps.Set.Snapshot()
	var ver uint64
	if r.deps.Events != nil {
		ver = r.deps.Events.Version()
	}
	gen := r.tickGen.Load()
	if v := r.sizes.Load(); v != nil && v.snap == snap && v.version == ver && v.gen == gen {
		return v
	}
	v := &sizeView{snap: snap, version: ver, gen: gen}
	def := r.cfg.KV.BlockSize
	for _, e := range snap.List {
		if s := r.endpointBlockSize(e); s != def {
			if v.of == nil {
				v.of = map[string]int{}
			}
			v.of[e.Key()] = s
			if !slices.Contains(v.extra, s) {
				v.extra = append(v.extra, s)
			}
		}
	}
	slices.Sort(v.extra)
	r.sizes.Store(v)
	return v
}

// endpointBlockSize is the block size e's KV blocks are hashed at.
func (r *Router) endpointBlockSize(e *endpoints.Entry) int {
	if r.deps.Events != nil {
		if s := r.deps.Events.BlockSize(e.Key()); s > 0 {
			return s
		}
	}
	if s := e.Capacity().BlockSize; s > 0 {
		return s
	}
	return r.cfg.KV.BlockSize
}

// sizedChain is a prompt's chain at a block size other than kv.blockSize.
type sizedChain struct {
	size  int
	chain []uint64
}

// hashSized hashes tokens once per extra block size of the view.
func hashSized(v *sizeView, seed uint64, tokens []uint32) []sizedChain {
	if v == nil || len(v.extra) == 0 {
		return nil
	}
	out := make([]sizedChain, 0, len(v.extra))
	for _, s := range v.extra {
		out = append(out, sizedChain{s, kvindex.BlockHashes(make([]uint64, 0, len(tokens)/s), seed, tokens, s)})
	}
	return out
}

// chainFor is p's index chain as endpoint's view holds it.
func (p *Prepared) chainFor(endpoint string) []uint64 {
	if p.view == nil {
		return p.IndexChain
	}
	s := p.view.size(endpoint, p.Req.BlockSize)
	if s == p.Req.BlockSize {
		return p.IndexChain
	}
	for _, c := range p.sized {
		if c.size == s {
			return c.chain
		}
	}
	return nil
}
