package main

import (
	"context"
	"sync"
	"time"

	"github.com/kvpick/kvpick/pkg/engine"
)

// runner drives the engine in real time: one goroutine steps it, sleeps for
// the step's modelled duration, then publishes the step's KV events and hands
// each request's updates to its stream. Handlers call add/abort/stats; the
// engine itself is only touched under mu.
type runner struct {
	mu      sync.Mutex
	eng     *engine.Engine
	streams map[string]*stream
	kv      []kvBatch // KV events of the current step, published after its sleep
	wake    chan struct{}
	publish func(ts time.Time, evs []engine.KVEvent) // may be nil
	steps   stepClock                                // under mu
}

// stepClock accounts where the engine's wall time went, so a run can tell a
// fleet that was short of work (idle) from one whose host was short of CPU
// (time lost between steps, see run).
type stepClock struct {
	steps          int64
	modelled, lost time.Duration
	prefillTokens  int64
}

type kvBatch struct {
	ts  time.Time
	evs []engine.KVEvent
}

func newRunner(cfg engine.Config, vocab []uint32, publish func(time.Time, []engine.KVEvent)) (*runner, error) {
	r := &runner{streams: make(map[string]*stream), wake: make(chan struct{}, 1), publish: publish}
	eng, err := engine.New(cfg, engine.KVSinkFunc(r.collect))
	if err != nil {
		return nil, err
	}
	eng.SetOutputVocab(vocab)
	r.eng = eng
	return r, nil
}

// collect is the engine's KV sink; it runs under mu.
func (r *runner) collect(ts time.Time, evs []engine.KVEvent) {
	r.kv = append(r.kv, kvBatch{ts, evs})
}

// add queues req and returns the stream its updates arrive on.
func (r *runner) add(req *engine.Request) (*stream, error) {
	st := newStream()
	r.mu.Lock()
	err := r.eng.Add(req)
	if err == nil {
		r.streams[req.ID] = st
	}
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return st, nil
}

// abort drops a request whose client went away.
func (r *runner) abort(id string) {
	r.mu.Lock()
	r.eng.Abort(id)
	delete(r.streams, id)
	r.mu.Unlock()
}

// stats snapshots the engine.
func (r *runner) stats() engine.Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.eng.Stats()
}

// resetCache clears the prefix cache and publishes AllBlocksCleared at once.
func (r *runner) resetCache() {
	r.mu.Lock()
	r.eng.ResetCache(time.Now())
	batches := r.takeKV()
	r.mu.Unlock()
	r.flushKV(batches)
}

func (r *runner) takeKV() []kvBatch {
	b := r.kv
	r.kv = nil
	return b
}

func (r *runner) flushKV(batches []kvBatch) {
	if r.publish == nil {
		return
	}
	for _, b := range batches {
		r.publish(b.ts, b.evs)
	}
}

// run steps the engine until ctx ends.
//
// A step that follows another back to back starts when the previous one's
// results were due, not when the timer woke this goroutine: a GPU does not
// wait for its host's scheduler, and the 0.7-0.9 ms a loaded VM added
// to each wake would otherwise cut the engine's throughput by a few percent,
// more when co-located processes (say, three picker replicas) use more CPU.
// Near saturation that few percent moves TTFT tails a lot, and it would be
// the host's doing, not the router's. Lag beyond maxCatchUp is given up and
// counted as lost.
func (r *runner) run(ctx context.Context) {
	var targets []delivery
	var due time.Time // when the previous step's results were due; zero after idling
	for ctx.Err() == nil {
		r.mu.Lock()
		if r.eng.Idle() {
			r.mu.Unlock()
			due = time.Time{}
			select {
			case <-r.wake:
			case <-ctx.Done():
			}
			continue
		}
		start, lost := stepStart(time.Now(), due)
		res := r.eng.Step(start)
		targets = r.route(res.Updates, targets[:0])
		batches := r.takeKV()
		r.mu.Unlock()
		due = start.Add(res.Duration)
		sleepUntil(ctx, due)
		r.flushKV(batches)
		for _, d := range targets {
			d.st.push(d.u)
		}
		r.account(res, lost)
	}
}

// maxCatchUp bounds how far behind real time a back-to-back step may start:
// a host that stays slower than the steps loses time rather than letting the
// engine's clock drift from the wall's.
const maxCatchUp = 5 * time.Millisecond

// stepStart is when a step picked up at now starts, and the engine time lost
// to the host before it, given when the previous step's results were due
// (zero if the engine was idle).
func stepStart(now, due time.Time) (time.Time, time.Duration) {
	if due.IsZero() || !now.After(due) {
		return now, 0
	}
	if late := now.Sub(due); late > maxCatchUp {
		return now, late
	}
	return due, 0
}

func (r *runner) account(res engine.StepResult, lost time.Duration) {
	r.mu.Lock()
	c := &r.steps
	c.steps++
	c.modelled += res.Duration
	c.lost += lost
	c.prefillTokens += int64(res.PrefillTokens)
	r.mu.Unlock()
}

type delivery struct {
	st *stream
	u  engine.Update
}

// route pairs updates with their streams (under mu) and forgets finished ones.
func (r *runner) route(ups []engine.Update, dst []delivery) []delivery {
	for _, u := range ups {
		st, ok := r.streams[u.ID]
		if !ok || !u.HasToken {
			continue
		}
		if u.Finished {
			delete(r.streams, u.ID)
		}
		dst = append(dst, delivery{st, u})
	}
	return dst
}

func sleepUntil(ctx context.Context, t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}

// engineEvent abbreviates the engine's KV event type.
type engineEvent = engine.KVEvent

// statsView adapts the engine's stats for the metrics collector.
func (r *runner) statsView() engineStatsView {
	r.mu.Lock()
	s, clock := r.eng.Stats(), r.steps
	r.mu.Unlock()
	return engineStatsView{clock: clock, running: s.Running, waiting: s.Waiting, kvUsage: s.KVUsage,
		queries: s.PrefixQueries, hits: s.PrefixHits, preemptions: s.Preemptions,
		runningLoRAs: s.RunningLoRAs, waitingLoRAs: s.WaitingLoRAs,
		blockSize: s.BlockSize, numBlocks: s.NumGPUBlocks, maxLoRAs: s.MaxLoRAs}
}
