package router

import (
	"sync"
	"time"

	"github.com/go-logr/logr"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/scheduler"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// candidates gathers every endpoint's state for p (load, active work and the
// cached prefix length from the index), reusing buf's storage when it is
// large enough.
func (r *Router) candidates(p *Prepared, buf []scheduler.Candidate) []scheduler.Candidate {
	snap := r.deps.Set.Snapshot()
	cands := states(snap, r.deps.Active, buf)
	if len(p.IndexChain) > 0 || len(p.sized) > 0 {
		start := time.Now()
		r.credit(p, snap, cands, p.Req.BlockSize, p.IndexChain)
		for _, c := range p.sized {
			r.credit(p, snap, cands, c.size, c.chain)
		}
		telemetry.DecisionStage.WithLabelValues("lookup").Observe(time.Since(start).Seconds())
	}
	if r.sharers {
		r.fillSharers(p, cands)
	}
	r.fillRates(cands)
	if r.pressure {
		now := r.deps.Now()
		for i := range cands {
			cands[i].PrefillRate = r.deps.Active.PrefillRate(cands[i].Key(), now)
		}
	}
	if r.popular != nil {
		r.popular.mark(p, cands, r.deps.Now())
	}
	if sl := r.cfg.Router.KVCost.SessionLoad; p.Req.NewSession && sl != nil && *sl {
		r.sessionLoad(cands)
	}
	return cands
}

// credit sets the cached prefix of every candidate whose view is hashed at
// size from chain's matches, in blocks of p.Req.BlockSize (rounded down).
func (r *Router) credit(p *Prepared, snap *endpoints.Snapshot, cands []scheduler.Candidate, size int, chain []uint64) {
	if len(chain) == 0 {
		return
	}
	for _, o := range r.deps.Index.MatchCredited(chain, r.deps.Now(), r.tiers, nil) {
		if i, ok := snap.Index(o.Endpoint); ok && p.viewSize(o.Endpoint) == size {
			cands[i].CachedBlocks = o.Blocks * r.stride * size / p.Req.BlockSize
		}
	}
}

// viewSize is the block size endpoint's view is hashed at for p.
func (p *Prepared) viewSize(endpoint string) int {
	if p.view == nil {
		return p.Req.BlockSize
	}
	return p.view.size(endpoint, p.Req.BlockSize)
}

// states gathers each endpoint's load, capacity and active work into buf's
// storage: all that eligibility, the busy thresholds and admission read (no
// index lookup, no rates).
func states(snap *endpoints.Snapshot, active *activework.Tracker, buf []scheduler.Candidate) []scheduler.Candidate {
	cands := buf[:0]
	for _, e := range snap.List {
		cands = append(cands, scheduler.Candidate{Entry: e, Load: e.Load(), Capacity: e.Capacity(), Active: active.Counts(e.Key())})
	}
	return cands
}

// candBufs recycles candidate lists: one per decision, 100 endpoints make
// 18 KB of garbage otherwise. The scheduler returns its choice in a slice of
// its own, so a list is free again once Schedule returns.
var candBufs = sync.Pool{New: func() any { return new([]scheduler.Candidate) }}

// Decide picks endpoints for p with fresh state and records the choice at
// once (the simulator's path: nothing is sent in between). It never blocks.
// Either way p's admission reservation is released.
func (r *Router) Decide(p *Prepared) (*Decision, error) {
	d, err := r.choose(p)
	if err != nil {
		r.unreserve(p)
		r.Abandon(p)
		return nil, err
	}
	d.Commit()
	return d, nil
}

// choose picks endpoints for p with fresh state and records at once what the
// next decision reads: the request and its prefill tokens on the primary
// (replacing the admission reservation) and, on the predicted path, the
// prefix it will cache there (about 2 µs; without it a burst sharing a prefix
// spreads before the first commit). The rest of the bookkeeping waits for
// Commit. A decision never committed, or refused by its engine, takes its
// predicted entry back (Decision.Refused).
func (r *Router) choose(p *Prepared) (*Decision, error) {
	if p.Session != "" {
		p.Req.Pinned = r.sessions.get(p.Session, r.deps.Now())
		p.Req.NewSession = p.Req.Pinned == ""
		r.rates.learner.ObserveSession(p.Req.NewSession)
	}
	buf := candBufs.Get().(*[]scheduler.Candidate)
	cands := r.candidates(p, *buf)
	adm := admitted(p, cands)
	start := time.Now()
	chosen, res, err := r.sched.Schedule(&p.Req, cands)
	chosen = pinAdmitted(chosen, adm)
	if (r.sharers || r.popular != nil) && err == nil {
		r.countCopy(p, cands, &chosen[0])
	}
	clear(cands) // drop the Entry pointers while pooled
	*buf = cands[:0]
	candBufs.Put(buf)
	telemetry.DecisionStage.WithLabelValues("score").Observe(time.Since(start).Seconds())
	telemetry.CompatSchedule(time.Since(start))
	if err != nil {
		return nil, err
	}
	primary := &chosen[0]
	d := &Decision{r: r, p: p, primary: primary.Key(), cachedBlocks: primary.CachedBlocks,
		endpoints: make([]string, len(chosen))}
	for i := range chosen {
		d.endpoints[i] = chosen[i].Key()
	}
	if r.cfg.Router.WorkerHeaders {
		d.headers = workerHeaders(primary)
	}
	now := r.deps.Now()
	d.expect = r.expect(p, primary, now)
	d.handle = r.deps.Active.Start(d.primary, r.work(p, d.CachedTokens()), now)
	r.unreserve(p)
	if chain := r.predictedChain(p, d.primary); chain != nil {
		d.claim, d.claimed = r.deps.Index.ClaimPredicted(d.primary, chain, now), true
	}
	if log := r.deps.Log.V(2); log.Enabled() { // v1 is the transport's "routed" line
		logDecision(log, d, &res)
	}
	return d, nil
}

// logDecision says why a decision went where it did (never the prompt), and
// what this replica's view of the primary was: the prefill it counted ahead
// of the request, the batch it joins and the time to first token the time
// model predicted there, so decisions of replicas with different views can
// be compared line by line.
func logDecision(log logr.Logger, d *Decision, res *scheduler.Result) {
	kv := []any{"endpoints", d.endpoints, "promptTokens", d.p.Req.PromptTokens, "blocks", d.p.Req.Blocks,
		"cachedBlocks", d.cachedBlocks, "pinned", res.Pinned}
	if len(res.Scores) > 0 && len(res.Order) > 0 {
		kv = append(kv, "score", res.Scores[res.Order[0]])
	}
	if e := d.expect; e != nil {
		kv = append(kv, "queuedTokens", e.pred.QueuedTokens, "running", e.pred.Running,
			"predictedTTFTSeconds", e.pred.TTFT)
	}
	log.Info("decision", kv...)
}

// commit records the rest of d's choice: the shared prompt blocks of its
// active work, the session pin, the hit ratio and the active-work gauges;
// and it tells peer replicas. Peers hear at commit, not at choose: a
// decision never committed was never sent, so it must not hold load on
// peers that no Done would ever free.
func (r *Router) commit(d *Decision) {
	p, now := d.p, r.deps.Now()
	d.handle.Hold()
	bridge := r.bridgeChain(p, d.primary)
	if r.deps.Sync != nil {
		d.syncID = p.wait.id // a request that waited is routed under the id peers know it by
		if d.syncID == 0 {
			d.syncID = r.syncIDs.Add(1)
		}
		chain := r.predictedChain(p, d.primary)
		if bridge != nil {
			chain = bridge // peers claim it until its first token too (replicasync.SetBridges)
		}
		r.deps.Sync.Added(d.syncID, d.primary, r.work(p, d.CachedTokens()), chain)
	}
	if bridge != nil {
		// Here, off the request's path, not at choose: the events path
		// indexes every block, and a long prompt's claim costs tens of µs.
		d.claim, d.claimed, d.bridged = r.deps.Index.ClaimUnreported(d.primary, bridge, now), true, true
	}
	if p.Session != "" {
		r.sessions.set(p.Session, d.primary, now)
	}
	if chain := p.chainFor(d.primary); r.deps.Events != nil && len(chain) > 0 {
		r.deps.Events.Probe(d.primary, chain[0], now)
	}
	if p.Req.Blocks > 0 {
		telemetry.KVHitRatio.WithLabelValues(r.deps.Pool, r.cfg.KV.Observation).
			Observe(float64(min(d.cachedBlocks, p.Req.Blocks)) / float64(p.Req.Blocks))
	}
	r.publishActive(d.primary)
}

// predictedChain is what choosing records as p's predicted prefix on
// endpoint: its index chain at the endpoint's block size while the endpoint
// is on the predicted path, nil while its engine reports by events.
func (r *Router) predictedChain(p *Prepared, endpoint string) []uint64 {
	if chain := p.chainFor(endpoint); len(chain) > 0 && r.predicts(endpoint) {
		return chain
	}
	return nil
}

// bridgeChain is what committing claims on an endpoint on the events path
// (kv.eventsBridge): p's chain, until its first token, by when the engine
// has reported what it stored (Decision.firstToken takes the claim back).
func (r *Router) bridgeChain(p *Prepared, endpoint string) []uint64 {
	if !r.bridges(endpoint) {
		return nil
	}
	return p.chainFor(endpoint)
}

// bridges reports whether a request routed to endpoint claims its prefix
// there until its first token (kv.eventsBridge on an events-path endpoint).
func (r *Router) bridges(endpoint string) bool { return r.bridge && !r.predicts(endpoint) }

// initBridges tells a replica sync which endpoints' chains are bridge
// claims (kv.eventsBridge), so peers take them back at the first token too.
func (r *Router) initBridges() {
	if b, ok := r.deps.Sync.(interface{ SetBridges(func(string) bool) }); ok {
		b.SetBridges(r.bridges)
	}
}

// work is p's active work on an endpoint believed to hold cached tokens of it.
func (r *Router) work(p *Prepared, cached int) activework.Work {
	return activework.Work{PromptTokens: p.Req.PromptTokens, UncachedTokens: p.Req.PromptTokens - cached,
		ExpectedOutput: p.MaxTokens, BlockSize: p.Req.BlockSize, Blocks: p.Chain}
}

// publishActive mirrors an endpoint's active work into its gauges.
func (r *Router) publishActive(endpoint string) {
	c := r.deps.Active.Counts(endpoint)
	telemetry.ActivePrefillTokens.WithLabelValues(endpoint).Set(float64(c.PrefillTokens))
	telemetry.ActiveDecodeBlocks.WithLabelValues(endpoint).Set(float64(c.DecodeBlocks))
	telemetry.ActiveRequests.WithLabelValues(endpoint).Set(float64(c.Requests))
	telemetry.CompatWorkerLoad(endpoint, c.PrefillTokens, c.DecodeBlocks)
	if r.pressure {
		telemetry.PrefillPressure.WithLabelValues(endpoint).Set(r.deps.Active.PrefillRate(endpoint, r.deps.Now()))
	}
}

// cachedBlocksOn reports how many of p's leading blocks endpoint holds per the index.
func (r *Router) cachedBlocksOn(p *Prepared, endpoint string) int {
	chain := p.chainFor(endpoint)
	if len(chain) == 0 {
		return 0
	}
	for _, o := range r.deps.Index.MatchCredited(chain, r.deps.Now(), r.tiers, nil) {
		if o.Endpoint == endpoint {
			return o.Blocks * r.stride * p.viewSize(endpoint) / p.Req.BlockSize
		}
	}
	return 0
}

// predicts reports whether the picker records its own decisions for
// endpoint: always on the predicted path, never on the events path, and with
// "auto" while the endpoint publishes no events.
func (r *Router) predicts(endpoint string) bool {
	switch r.cfg.KV.Observation {
	case v1.ObservePredicted:
		return true
	case v1.ObserveEvents:
		return false
	}
	return r.deps.Events == nil || !r.deps.Events.OnEvents(endpoint)
}

// sessionLoad gives each candidate the running requests its pinned sessions
// are expected to keep there: its pins times the pool's running requests
// per pin. Pinned sessions between turns run nothing now but will send
// their next turns to the same endpoint, so a new session placed by the
// current load alone crowds onto endpoints whose sessions happen to think.
func (r *Router) sessionLoad(cands []scheduler.Candidate) {
	r.sessionLoadBy(cands, func(i int) string { return cands[i].Key() })
}

// sessionLoadBy is sessionLoad with the candidates' keys given by key.
func (r *Router) sessionLoadBy(cands []scheduler.Candidate, key func(int) string) {
	pins, running := 0, 0
	for i := range cands {
		cands[i].Sessions = r.sessions.count(key(i))
		pins += cands[i].Sessions
		running += cands[i].Active.Requests
	}
	if pins == 0 {
		return
	}
	perPin := float64(running) / float64(pins)
	for i := range cands {
		cands[i].SessionRunning = float64(cands[i].Sessions) * perPin
	}
}
