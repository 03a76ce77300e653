package router

import (
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/telemetry"
	"github.com/kvpick/kvpick/pkg/tokenize"
)

// storeEvent is a BlockStored of prompt's full blocks of size bs, as an engine
// at that block size (and adapter) publishes it.
func storeEvent(prompt string, bs int, lora string) kvevents.BlockStored {
	tokens := tokenize.Approx(nil, prompt)
	full := len(tokens) / bs * bs
	hashes := make([]uint64, full/bs)
	for i := range hashes {
		hashes[i] = uint64(5000 + i) // engine hashes are not ours
	}
	return kvevents.BlockStored{BlockHashes: hashes, TokenIDs: tokens[:full], BlockSize: bs, LoRAName: lora}
}

// pathGauges reads kvpick_kv_observation_path for one pool: "endpoint/path" -> value.
func pathGauges(t *testing.T, pool string) map[string]float64 {
	return testutil.GatherWhere(t, telemetry.Registry, func(m *dto.Metric) (string, bool) {
		return testutil.Label(m, "endpoint") + "/" + testutil.Label(m, "path"), testutil.Label(m, "pool") == pool
	})
}

// With "auto" an endpoint is on the predicted path (the picker records its
// decisions) until its events arrive, on the events path (no predicted
// records: its events say what it holds) while they flow, and back on the
// predicted path once they stop for longer than kv.eventsSilenceAfter.
func TestAutoPathFollowsEachEndpointsEvents(t *testing.T) {
	f := newFixture(t, 2, func(c *v1.Config) {
		c.KV.Observation = v1.ObserveAuto
		c.KV.EventsSilenceAfter = v1.D(30 * time.Second)
	})
	pub, quiet := "10.0.0.1:8000", "10.0.0.2:8000"
	gauge := func(ep, path string) float64 {
		return pathGauges(t, t.Name())["kvpick_kv_observation_path/"+ep+"/"+path]
	}
	if gauge(pub, "predicted") != 1 || gauge(quiet, "predicted") != 1 || gauge(pub, "events") != 0 {
		t.Fatalf("before any event: gauges %v, want every endpoint predicted", pathGauges(t, t.Name()))
	}
	if !f.r.predicts(pub) {
		t.Fatal("no events yet, but the picker does not record its decisions")
	}
	f.feed.HandleBatch(pub, kvevents.Batch{Events: []kvevents.Event{storeEvent(words("x", 50), 16, "")}})
	if f.r.predicts(pub) || !f.r.predicts(quiet) || gauge(pub, "events") != 1 || gauge(pub, "predicted") != 0 || gauge(quiet, "predicted") != 1 {
		t.Fatalf("after events from %s: predicts %v/%v, gauges %v", pub, f.r.predicts(pub), f.r.predicts(quiet), pathGauges(t, t.Name()))
	}
	f.advance(20 * time.Second)
	f.r.Tick(f.clock())
	if f.r.predicts(pub) {
		t.Fatal("moved to predicted within the silence bound")
	}
	f.advance(11 * time.Second)
	f.r.Tick(f.clock())
	if !f.r.predicts(pub) || gauge(pub, "predicted") != 1 || gauge(pub, "events") != 0 {
		t.Fatalf("silent past the bound: predicts %v, gauges %v", f.r.predicts(pub), pathGauges(t, t.Name()))
	}
	f.feed.HandleBatch(pub, kvevents.Batch{Events: []kvevents.Event{kvevents.BlockRemoved{BlockHashes: []uint64{1}}}})
	if f.r.predicts(pub) || gauge(pub, "events") != 1 {
		t.Fatal("events resumed but the endpoint stayed on the predicted path")
	}
}

// Only endpoints on the predicted path keep predicted entries: a decision for
// an endpoint on the events path leaves the index as its events made it (a
// bridge claim, with kv.eventsBridge on, is taken back when it ends).
func TestAutoRecordsPredictedOnlyOffTheEventsPath(t *testing.T) {
	for _, events := range []bool{false, true} {
		f := newFixture(t, 1, func(c *v1.Config) { c.KV.Observation = v1.ObserveAuto })
		ep := "10.0.0.1:8000"
		if events {
			f.feed.HandleBatch(ep, kvevents.Batch{Events: []kvevents.Event{storeEvent(words("other", 50), 16, "")}})
		}
		before := f.index.Stats().Entries
		d, err := f.route(context.Background(), input(words("p", 300), nil))
		if err != nil {
			t.Fatal(err)
		}
		d.Done(nil)
		grew := f.index.Stats().Entries > before
		if grew == events {
			t.Errorf("events path %v: index grew %v by a decision (want growth only on the predicted path)", events, grew)
		}
	}
}

// An endpoint at another block size than kv.blockSize (SGLang's page size 1,
// TensorRT-LLM's 32) is matched at its own size: from its events, or from its
// scraped capacity before any event.
func TestBlockSizePerEndpoint(t *testing.T) {
	prompt := words("shared", 300)
	for _, bs := range []int{1, 32, 64} {
		f := newFixture(t, 2, func(c *v1.Config) { c.KV.Observation = v1.ObserveEvents })
		target := "10.0.0.2:8000"
		f.feed.HandleBatch(target, kvevents.Batch{Events: []kvevents.Event{storeEvent(prompt, bs, "")}})
		p, err := f.r.Prepare(context.Background(), input(prompt+words("q", 5), nil))
		if err != nil {
			t.Fatal(err)
		}
		want := len(tokenize.Approx(nil, prompt)) / bs * bs / 16
		if got := f.r.cachedBlocksOn(p, target); got != want || want == 0 {
			t.Errorf("block size %d: matched %d blocks of 16, want %d", bs, got, want)
		}
		if len(p.sized) != 1 || p.sized[0].size != bs {
			t.Errorf("block size %d: request hashed at %v extra sizes, want exactly [%d]", bs, p.sized, bs)
		}
	}
}

// Two endpoints at one other size cost one extra hashing, not two.
func TestRequestHashedOncePerDistinctSize(t *testing.T) {
	f := newFixture(t, 3, func(c *v1.Config) { c.KV.Observation = v1.ObserveAuto },
		func(i int, e *endpoints.Endpoint) {
			if i > 0 {
				e.Capacity.BlockSize = 32 // as a scraped or configured capacity says
			}
		})
	p, err := f.r.Prepare(context.Background(), input(words("w", 200), nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.sized) != 1 || p.sized[0].size != 32 {
		t.Fatalf("extra chains %+v, want one at 32", p.sized)
	}
	if p.viewSize("10.0.0.1:8000") != 16 || p.viewSize("10.0.0.3:8000") != 32 {
		t.Fatalf("view sizes %d/%d, want 16/32", p.viewSize("10.0.0.1:8000"), p.viewSize("10.0.0.3:8000"))
	}
}

// A LoRA request matches the blocks its adapter's events stored, whether LoRA
// routing is on or off, and never the base model's blocks of the same tokens.
func TestLoRARequestMatchesItsAdaptersEvents(t *testing.T) {
	prompt := words("lora", 300)
	for _, routing := range []bool{false, true} {
		f := newFixture(t, 2, func(c *v1.Config) { c.KV.Observation = v1.ObserveEvents; c.Router.LoRA.Enabled = routing })
		target, base := "10.0.0.2:8000", "10.0.0.1:8000"
		f.feed.HandleBatch(target, kvevents.Batch{Events: []kvevents.Event{storeEvent(prompt, 16, "sql")}})
		f.feed.HandleBatch(base, kvevents.Batch{Events: []kvevents.Event{storeEvent(prompt, 16, "")}})
		in := input(prompt, nil)
		in.Request.Model = "sql"
		p, err := f.r.Prepare(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		want := len(tokenize.Approx(nil, prompt)) / 16
		if got := f.r.cachedBlocksOn(p, target); got != want {
			t.Errorf("lora routing %v: adapter request matched %d blocks, want %d", routing, got, want)
		}
		if got := f.r.cachedBlocksOn(p, base); got != 0 {
			t.Errorf("lora routing %v: adapter request matched %d base-model blocks", routing, got)
		}
	}
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}
