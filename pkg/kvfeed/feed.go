// Package kvfeed is the observed path's feed: it applies the engines' KV
// events to the prefix index and watches for the events going silent. It
// writes to state (kvindex); the router only reads what it wrote.
package kvfeed

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/kvindex"
)

// Options wire a Feed to the state it reads and writes.
type Options struct {
	Set   *endpoints.Set // endpoints' models seed the index's chain
	Index *kvindex.Index
	Log   logr.Logger
	// Now is the clock (default time.Now); a simulator passes virtual time.
	Now func() time.Time
	// Pool labels the path and silence metrics.
	Pool string
	// Auto chooses the path per endpoint (kv.observation "auto"); otherwise
	// every endpoint is on the events path ("events").
	Auto bool
	// SilenceAfter is kv.eventsSilenceAfter (default: the configuration's).
	SilenceAfter time.Duration
	// UnmatchedAfter and ProbeSettle are kv.unmatchedAlarmAfter and
	// kv.unmatchedProbeSettle (default: the configuration's).
	UnmatchedAfter int
	ProbeSettle    time.Duration
}

// Feed maps KV events to the index. It implements kvevents.Handler. Safe for
// concurrent use.
type Feed struct {
	o       Options
	watch   *silenceWatch
	st      states
	version atomic.Uint64
}

// New returns a feed; its silence watch starts now.
func New(o Options) *Feed {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SilenceAfter <= 0 {
		o.SilenceAfter = v1.Default().KV.EventsSilenceAfter.Duration
	}
	if o.UnmatchedAfter <= 0 {
		o.UnmatchedAfter = v1.Default().KV.UnmatchedAlarmAfter
	}
	if o.ProbeSettle <= 0 {
		o.ProbeSettle = v1.Default().KV.UnmatchedProbeSettle.Duration
	}
	return &Feed{o: o, watch: newSilenceWatch(o.Now(), o.SilenceAfter)}
}

// HandleBatch applies one endpoint's KV events to the index. Block hashes in
// events are the engine's; the index maps them to our own chain via the
// events' token ids, seeded as requests are (see seedOf). A batch puts its
// endpoint on the events path and states its block size.
func (f *Feed) HandleBatch(endpointKey string, b kvevents.Batch) {
	now := f.o.Now()
	f.watch.seen(now)
	f.seen(endpointKey, f.st.getOrCreate(endpointKey), now, storedBlockSize(b))
	model := f.endpointModel(endpointKey)
	for _, ev := range b.Events {
		switch e := ev.(type) {
		case kvevents.BlockStored:
			err := f.o.Index.ApplyStoredBlocks(endpointKey, storedOf(e, model), now)
			if err != nil && !errors.Is(err, kvindex.ErrUnknownParent) {
				f.o.Log.V(1).Info("kv event rejected", "endpoint", endpointKey, "err", err.Error())
			}
		case kvevents.BlockRemoved:
			f.o.Index.ApplyRemovedBlocks(endpointKey, e.GroupIdx, kvindex.TierOf(e.Medium), e.BlockHashes)
		case kvevents.AllBlocksCleared:
			f.o.Index.ApplyCleared(endpointKey)
		}
	}
}

// Check is the periodic upkeep the router's Tick runs: with "events" it
// reports (metric and a log line) when the pool heard no event within the
// silence bound, and again when events resume; with "auto" it moves silent
// endpoints to the predicted path; both judge the unmatched-blocks probes.
func (f *Feed) Check(now time.Time) {
	if !f.o.Auto {
		f.watch.check(now, f.o.Pool, f.o.Log)
	}
	f.checkPaths(now)
	f.checkProbes(now)
}

// storedBlockSize is the block size the batch's last store states, 0 if none.
func storedBlockSize(b kvevents.Batch) int {
	for i := len(b.Events) - 1; i >= 0; i-- {
		if s, ok := b.Events[i].(kvevents.BlockStored); ok && s.BlockSize > 0 {
			return s.BlockSize
		}
	}
	return 0
}

func (f *Feed) endpointModel(key string) string {
	if e, ok := f.o.Set.Snapshot().Get(key); ok && len(e.Models) > 0 {
		return e.Models[0]
	}
	return ""
}

// storedOf maps a BlockStored onto the index: the cache salt SGLang states
// is folded into the seed as requests fold theirs; group, tier and extra keys
// keep their blocks apart.
func storedOf(e kvevents.BlockStored, model string) kvindex.Stored {
	return kvindex.Stored{Seed: kvindex.ChainSeed(model, eventAdapter(e), e.CacheSalt), Parent: e.Parent,
		EngineHashes: e.BlockHashes, Tokens: e.TokenIDs, BlockSize: e.BlockSize, ExtraKeys: e.ExtraKeys,
		Group: e.GroupIdx, Tier: kvindex.TierOf(e.Medium)}
}

// eventAdapter names the LoRA adapter of a store: its lora_name (what vLLM
// folds into its own block hashes and requests name as their model). An
// event with only the deprecated numeric lora_id cannot be matched to a
// request's adapter name; it gets a seed of its own so its blocks are never
// credited to base-model requests.
func eventAdapter(e kvevents.BlockStored) string {
	if e.LoRAName == "" && e.LoRAID != nil {
		return fmt.Sprintf("\x00lora-id:%d", *e.LoRAID)
	}
	return e.LoRAName
}
