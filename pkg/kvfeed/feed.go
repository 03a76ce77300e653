// Package kvfeed is the observed path's feed: it applies the engines' KV
// events to the prefix index and watches for the events going silent. It
// writes to state (kvindex); the router only reads what it wrote.
package kvfeed

import (
	"errors"
	"time"

	"github.com/go-logr/logr"

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
	// Pool labels the silence metric.
	Pool string
}

// Feed maps KV events to the index. It implements kvevents.Handler. Safe for
// concurrent use.
type Feed struct {
	o     Options
	watch *silenceWatch
}

// New returns a feed; its silence watch starts now.
func New(o Options) *Feed {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Feed{o: o, watch: newSilenceWatch(o.Now())}
}

// HandleBatch applies one endpoint's KV events to the index. Block hashes in
// events are the engine's; the index maps them to our own chain via the
// events' token ids, seeded with the endpoint's model (endpoints must list
// their model for observed hits to match requests) and the adapter name.
func (f *Feed) HandleBatch(endpointKey string, b kvevents.Batch) {
	now := f.o.Now()
	f.watch.seen(now)
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

// Check reports (metric and a log line) when no event has arrived for a
// minute, and again when events resume. The router's Tick calls it.
func (f *Feed) Check(now time.Time) { f.watch.check(now, f.o.Pool, f.o.Log) }

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
	return kvindex.Stored{Seed: kvindex.Seed(model, e.LoRAName, e.CacheSalt), Parent: e.Parent,
		EngineHashes: e.BlockHashes, Tokens: e.TokenIDs, BlockSize: e.BlockSize, ExtraKeys: e.ExtraKeys,
		Group: e.GroupIdx, Tier: kvindex.TierOf(e.Medium)}
}
