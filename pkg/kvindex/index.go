package kvindex

import (
	"errors"
	"sync/atomic"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

// defaults are the configuration's (api/v1alpha1).
var defaults = v1.Default().KV

// ErrUnknownParent is returned by ApplyStored when the parent engine hash is
// not known for the endpoint: the chain cannot be placed and nothing is stored.
var ErrUnknownParent = errors.New("kvindex: unknown parent block")

// Options configures an Index; zero fields take the defaults.
type Options struct {
	// MaxBlocksPerEndpoint bounds each endpoint's entries when its capacity is
	// unknown; SetCapacity overrides it per endpoint.
	MaxBlocksPerEndpoint int
	// PruneTarget is the fraction of capacity kept after an over-capacity prune.
	PruneTarget float64
	// PredictedTTL is how long a RecordPredicted claim lasts on an endpoint
	// whose capacity is unknown; PredictedTTLKnownCapacity on one whose
	// capacity SetCapacity gave (see ttl).
	PredictedTTL, PredictedTTLKnownCapacity time.Duration
}

// OptionsFor returns the options kv configures.
func OptionsFor(k *v1.KV) Options {
	o := Options{MaxBlocksPerEndpoint: k.MaxBlocksPerEndpoint, PredictedTTL: k.PredictedTTL.Duration,
		PredictedTTLKnownCapacity: k.PredictedTTLKnownCapacity.Duration}
	if k.PruneTarget != nil {
		o.PruneTarget = *k.PruneTarget
	}
	return o
}

// withDefaults fills zero or out-of-range fields.
func (o Options) withDefaults() Options {
	if o.MaxBlocksPerEndpoint <= 0 {
		o.MaxBlocksPerEndpoint = defaults.MaxBlocksPerEndpoint
	}
	if !(o.PruneTarget > 0 && o.PruneTarget <= 1) {
		o.PruneTarget = *defaults.PruneTarget
	}
	if o.PredictedTTL <= 0 {
		o.PredictedTTL = defaults.PredictedTTL.Duration
	}
	if o.PredictedTTLKnownCapacity <= 0 {
		o.PredictedTTLKnownCapacity = defaults.PredictedTTLKnownCapacity.Duration
	}
	return o
}

// Overlap is one endpoint's longest held prefix of a chain, in blocks.
type Overlap struct {
	Endpoint string
	Blocks   int
}

// Index maps prompt blocks to the endpoints holding them. All methods are safe
// for concurrent use; lookups take only per-shard read locks and wait on
// per-endpoint bookkeeping only to drop claims that are due to expire.
type Index struct {
	opts          Options
	s             *shards
	reg           *registry
	unknownParent atomic.Uint64
	tiered        atomic.Bool // some endpoint holds blocks off group 0's GPU tier
	// counters of removed endpoints, so Stats totals never go down
	retiredEvictions, retiredExpired atomic.Uint64
	retracted                        atomic.Uint64 // entries taken back by Retract
}

// New returns an empty index.
func New(opts Options) *Index {
	return &Index{opts: opts.withDefaults(), s: newShards(), reg: newRegistry()}
}

// RecordPredicted records the picker's own decision as if endpoint now holds
// chain; the claim expires after the endpoint's TTL (see ttl). Earlier blocks of the chain
// are kept longer than later ones under LRU pressure. Claims expire in the
// order they were recorded, so now should not go backwards per endpoint (if
// it does, a claim may outlive its TTL until the earlier ones expire).
func (ix *Index) RecordPredicted(endpoint string, chain []uint64, now time.Time) {
	ix.claim(endpoint, chain, now, false, false) // nothing will retract it: keep no undo record
}

// settle enforces capacity and bounds bookkeeping. Callers hold ep.mu.
func (ix *Index) settle(ep *endpoint) {
	limit := ix.limit(ep)
	ep.evict(limit, int(float64(limit)*ix.opts.PruneTarget))
	ep.compact()
	ep.flush(ix.s)
}

// ApplyStored applies an engine BlockStored event for endpoint on the GPU
// tier of group 0 (see ApplyStoredBlocks). tokens must cover
// len(engineHashes)*blockSize tokens. It returns ErrUnknownParent (and stores
// nothing) when parent is not a known engine hash of the endpoint, or an error
// when tokens are too short.
func (ix *Index) ApplyStored(endpoint string, seed uint64, parent *uint64, engineHashes []uint64, tokens []uint32, blockSize int, now time.Time) error {
	return ix.ApplyStoredBlocks(endpoint, Stored{Seed: seed, Parent: parent, EngineHashes: engineHashes, Tokens: tokens, BlockSize: blockSize}, now)
}

// ApplyRemoved applies an engine BlockRemoved event on the GPU tier of group
// 0; unknown hashes are ignored.
func (ix *Index) ApplyRemoved(endpoint string, engineHashes []uint64) {
	ix.ApplyRemovedBlocks(endpoint, 0, TierGPU, engineHashes)
}

// ApplyCleared applies an engine AllBlocksCleared event: the endpoint holds
// nothing. Its capacity setting is kept.
func (ix *Index) ApplyCleared(endpoint string) {
	if ep := ix.reg.get(endpoint); ep != nil {
		ep.mu.Lock()
		ep.clearAll(ix.s)
		ep.mu.Unlock()
	}
}

// RemoveEndpoint forgets an endpoint that left the pool, with all its blocks.
func (ix *Index) RemoveEndpoint(endpoint string) {
	ep := ix.reg.unlink(endpoint)
	if ep == nil {
		return
	}
	ep.mu.Lock()
	ep.dead = true
	ep.clearAll(ix.s)
	ix.retiredEvictions.Add(ep.evictions)
	ix.retiredExpired.Add(ep.expired)
	ep.mu.Unlock()
	ix.reg.release(ep.id)
}

// SetCapacity sets an endpoint's capacity in blocks (e.g. the engine's total
// KV blocks), pruning at once if it now holds more; blocks <= 0 restores the
// default bound.
func (ix *Index) SetCapacity(endpoint string, blocks int) {
	ep := ix.reg.getOrCreate(endpoint)
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if !ep.dead {
		ep.capacity = max(blocks, 0)
		ix.settle(ep)
	}
}

// Expire drops predicted entries whose TTL has run out by now and returns how
// many it dropped. Match and RecordPredicted also expire lazily, so calling
// Expire periodically keeps that work off the lookup path.
func (ix *Index) Expire(now time.Time) int {
	t, n := now.UnixNano(), 0
	for _, ep := range ix.reg.all() {
		n += ix.expireOne(ep, t)
	}
	return n
}

func (ix *Index) expireOne(ep *endpoint, t int64) int {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	n := ep.expire(t)
	ep.compact()
	ep.flush(ix.s)
	return n
}
