package router

import (
	"slices"
	"strconv"
	"sync"

	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/request"
	"github.com/kvpick/kvpick/pkg/route"
	"github.com/kvpick/kvpick/pkg/scheduler"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// Decision is one routed request: where it goes and its lifecycle, which
// moves its active work (prefill done at the first token, freed at the end).
// Safe for concurrent use.
type Decision struct {
	r            *Router
	p            *Prepared
	primary      string
	cachedBlocks int
	endpoints    []string
	headers      []route.HeaderValue

	mu        sync.Mutex
	handle    *activework.Handle // started by choose
	expect    *expectation       // the time model's prediction, to learn from
	syncID    uint64             // this decision's id towards Deps.Sync (0: not told)
	claim     kvindex.Claim      // the prefix claimed on the primary: predicted at choose, or a bridge at commit
	claimed   bool               // a claim was recorded (peers did too, at Added)
	bridged   bool               // claim is the events path's bridge: taken back at the first token
	prefilled bool               // the first token was seen: the engine holds the prompt
	committed bool
	done      bool
}

// Endpoints is the ordered destination list, primary first.
func (d *Decision) Endpoints() []string { return d.endpoints }

// Headers are the extra worker headers, when enabled.
func (d *Decision) Headers() []route.HeaderValue { return d.headers }

// Prepared is the request this decision routed.
func (d *Decision) Prepared() *Prepared { return d.p }

// CachedTokens is the prefix the primary endpoint was believed to hold.
func (d *Decision) CachedTokens() int { return d.p.cachedTokens(d.cachedBlocks) }

// Commit records the rest of the choice (shared blocks of the active work,
// session pin, metrics); the request, its prefill and its predicted prefix
// were recorded when it was chosen. Route's caller calls it once the answer
// has been written; Decide commits itself. Lifecycle calls before Commit are
// ignored, and Done without Commit frees what choosing counted. Idempotent.
func (d *Decision) Commit() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done || d.committed {
		return
	}
	d.committed = true
	d.r.commit(d)
}

// Served moves the accounting when the proxy used one of the fallbacks. A
// served endpoint outside the decision's list is ignored: the value comes
// from the proxy and must not create accounting (or metric series) for
// arbitrary names.
func (d *Decision) Served(endpoint string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done || !d.committed || endpoint == d.handle.Endpoint() || !slices.Contains(d.endpoints, endpoint) {
		return
	}
	old := d.handle.Endpoint()
	d.retract() // the primary failed before serving it: it cached nothing
	d.handle.Free()
	d.r.publishActive(old)
	w := d.r.work(d.p, d.p.cachedTokens(d.r.cachedBlocksOn(d.p, endpoint)))
	d.handle = d.r.deps.Active.Add(endpoint, w, d.r.deps.Now())
	d.r.publishActive(endpoint)
	if d.syncID != 0 { // peers move it too: no predicted prefix was recorded there
		if d.claimed {
			d.r.deps.Sync.Refused(d.syncID) // and take back the one recorded at the failed primary
		}
		d.r.deps.Sync.Freed(d.syncID)
		d.r.deps.Sync.Added(d.syncID, endpoint, w, nil)
	}
}

// The ext_proc stream finds the untimed first token and refusals through these interfaces.
var (
	_ route.FirstTokenAtEnd = (*Decision)(nil)
	_ route.Refuser         = (*Decision)(nil)
)

// FirstToken marks the prefill done, at the first token's time.
func (d *Decision) FirstToken() { d.firstToken(true) }

// FirstTokenAtEnd marks the prefill done when the first token was seen only
// with the whole response (route.FirstTokenAtEnd): no rate learns from it.
func (d *Decision) FirstTokenAtEnd() { d.firstToken(false) }

func (d *Decision) firstToken(timed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.done && d.committed {
		now := d.r.deps.Now()
		d.prefilled = true
		if d.bridged {
			d.retract() // the engine's events have reported what it stored; they speak for it now
		} else {
			d.claim = d.claim.Kept() // no refusal can come now: drop its undo record
		}
		d.handle.PrefillDone(now)
		if timed {
			d.learnFirst(now)
		}
		d.r.publishActive(d.handle.Endpoint())
		if d.syncID != 0 {
			d.r.deps.Sync.PrefillDone(d.syncID)
		}
	}
}

// Progress grows the decode accounting with the output seen.
func (d *Decision) Progress(completionTokens int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.done && d.committed {
		now := d.r.deps.Now()
		d.handle.Progress(completionTokens, now)
		d.learnProgress(completionTokens, now)
	}
}

// Usage records the engine's own cache report.
func (d *Decision) Usage(u request.Usage) {
	if u.PromptTokens > 0 {
		telemetry.EngineCachedRatio.WithLabelValues(d.r.deps.Pool).Observe(float64(u.CachedTokens) / float64(u.PromptTokens))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.committed {
		d.learnUsage(u.PromptTokens, u.CachedTokens, u.CompletionTokens)
	}
}

// Refused tells the decision that its endpoint answered with an error status
// before any output: a prompt over the model's context length, a bad
// parameter, an engine fault. The engine computed and cached none of the
// prompt, so the prefix blocks only this decision claimed on the predicted
// path are taken back; left in, a client resending an over-long prompt
// would push real prefixes out of the index. Call it before Done; after the
// first token it does nothing.
func (d *Decision) Refused() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done || d.prefilled {
		return
	}
	d.retract()
	if d.claimed && d.syncID != 0 {
		d.r.deps.Sync.Refused(d.syncID) // peers recorded the same prefix
	}
}

// retract takes back the predicted claim once. Callers hold d.mu.
func (d *Decision) retract() {
	d.r.deps.Index.Retract(d.claim)
	d.claim = kvindex.Claim{}
}

// Done frees the request's accounting. Idempotent.
func (d *Decision) Done(error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return
	}
	d.done = true
	if !d.committed {
		d.r.Abandon(d.p) // never sent: peers must stop holding their queues for it
		d.retract()      // and no engine will cache its prompt
	} else if d.bridged {
		d.retract() // ended without a first token seen (an error midway): events speak for what was stored
	}
	d.handle.Free()
	d.r.publishActive(d.handle.Endpoint())
	if d.syncID != 0 {
		d.r.deps.Sync.Freed(d.syncID)
	}
}

// workerHeaders are what a Dynamo frontend in direct mode reads: the worker
// instance id (a u64) and the data-parallel rank under both names it accepts
// (x-data-parallel-rank is also the name vLLM reads).
func workerHeaders(c *scheduler.Candidate) []route.HeaderValue {
	var h []route.HeaderValue
	if c.Entry.WorkerID != "" {
		h = append(h, route.HeaderValue{Key: "x-worker-instance-id", Value: string(c.Entry.WorkerID)})
	}
	if c.Entry.DPRank != nil {
		rank := strconv.Itoa(*c.Entry.DPRank)
		h = append(h, route.HeaderValue{Key: "x-dp-rank", Value: rank}, route.HeaderValue{Key: "x-data-parallel-rank", Value: rank})
	}
	return h
}
