package router

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// HandleBatch applies one endpoint's KV events to the index (the observed
// path). It implements kvevents.Handler. Block hashes in events are the
// engine's; the index maps them to our own chain via the events' token ids,
// seeded with the endpoint's model (endpoints must list their model for
// observed hits to match requests) and the adapter name.
func (r *Router) HandleBatch(endpointKey string, b kvevents.Batch) {
	now := r.deps.Now()
	r.events.seen(now)
	model := r.endpointModel(endpointKey)
	for _, ev := range b.Events {
		switch e := ev.(type) {
		case kvevents.BlockStored:
			err := r.deps.Index.ApplyStoredBlocks(endpointKey, storedOf(e, model), now)
			if err != nil && !errors.Is(err, kvindex.ErrUnknownParent) {
				r.deps.Log.V(1).Info("kv event rejected", "endpoint", endpointKey, "err", err.Error())
			}
		case kvevents.BlockRemoved:
			r.deps.Index.ApplyRemovedBlocks(endpointKey, e.GroupIdx, kvindex.TierOf(e.Medium), e.BlockHashes)
		case kvevents.AllBlocksCleared:
			r.deps.Index.ApplyCleared(endpointKey)
		}
	}
}

// storedOf maps a BlockStored onto the index: the cache salt SGLang states
// is folded into the seed as requests fold theirs; group, tier and extra keys
// keep their blocks apart.
func storedOf(e kvevents.BlockStored, model string) kvindex.Stored {
	return kvindex.Stored{Seed: kvindex.Seed(model, e.LoRAName, e.CacheSalt), Parent: e.Parent,
		EngineHashes: e.BlockHashes, Tokens: e.TokenIDs, BlockSize: e.BlockSize, ExtraKeys: e.ExtraKeys,
		Group: e.GroupIdx, Tier: kvindex.TierOf(e.Medium)}
}

func (r *Router) endpointModel(key string) string {
	if e, ok := r.deps.Set.Snapshot().Get(key); ok && len(e.Models) > 0 {
		return e.Models[0]
	}
	return ""
}

// eventsWatch notices when the events path receives nothing, so kv routing
// that has silently become load-only is visible (metric and a log line).
type eventsWatch struct {
	start  time.Time
	last   atomic.Int64
	mu     sync.Mutex
	silent bool
}

const silenceAfter = time.Minute

func newEventsWatch() *eventsWatch { return &eventsWatch{start: time.Now()} }

func (w *eventsWatch) seen(now time.Time) { w.last.Store(now.UnixNano()) }

func (w *eventsWatch) check(now time.Time, pool string, log logr.Logger) {
	last := time.Unix(0, w.last.Load())
	if w.last.Load() == 0 {
		last = w.start
	}
	silent := now.Sub(last) > silenceAfter
	w.mu.Lock()
	changed := silent != w.silent
	w.silent = silent
	w.mu.Unlock()
	if !changed {
		return
	}
	if silent {
		telemetry.EventsSilent.WithLabelValues(pool).Set(1)
		log.Info("WARNING: kv.observation is events but no KV event arrived in the last minute; kv routing is load-only until events flow",
			"lastEvent", last)
		return
	}
	telemetry.EventsSilent.WithLabelValues(pool).Set(0)
	log.Info("KV events flowing again")
}
