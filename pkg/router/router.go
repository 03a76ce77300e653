// Package router decides where a request goes (pkg/scheduler only scores the
// candidates it gathers). It is the decision path: it turns a parsed request into block
// hashes, gathers each endpoint's state (load, active work, cached prefix),
// holds the request in the admission queue while the fleet is full, asks the
// scheduler for an ordered choice, and records the outcome (active work,
// predicted cache, session pin). It implements route.Decider; the same
// Prepare/Admissible/Decide/Tick steps serve the virtual-time simulator.
package router

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/apierr"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/kvfeed"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/replicasync"
	"github.com/kvpick/kvpick/pkg/route"
	"github.com/kvpick/kvpick/pkg/scheduler"
	"github.com/kvpick/kvpick/pkg/telemetry"
	"github.com/kvpick/kvpick/pkg/tokenize"
)

// Deps are the stateful parts the router reads and updates.
type Deps struct {
	Set       *endpoints.Set
	Index     *kvindex.Index
	Active    *activework.Tracker
	Tokenizer tokenize.Tokenizer
	Log       logr.Logger
	// Now is the clock (default time.Now); a simulator passes virtual time.
	Now func() time.Time
	// Pool labels metrics.
	Pool string
	// Events is the KV-event feed with kv.observation "events" or "auto" (nil
	// otherwise, or in a simulator without engine events): it says which
	// endpoints are on the events path and at which block size; Tick runs its
	// upkeep.
	Events *kvfeed.Feed
	// Sync hears about each committed decision's lifecycle, for peer
	// replicas (nil: replica sync off). If it also has Tick(time.Time),
	// the router's Tick runs it.
	Sync replicasync.Recorder
}

// Router is safe for concurrent use.
type Router struct {
	cfg      *v1.Config
	sched    *scheduler.Scheduler
	deps     Deps
	queue    *admission.Queue[*Prepared] // nil when queueing is off
	gate     *admission.Gate[*Prepared]  // the queue threshold; nil when queueing is off
	order    replicasync.QueueOrder      // the queue order shared with peers; nil when not shared
	sessions *sessions
	stride   int                 // index every stride-th block (v1alpha1 KV.IndexStride)
	bridge   bool                // kv.eventsBridge: claim routed prefixes on events-path endpoints until the first token
	sharers  bool                // the scheduler reads Candidate.Sharers (router.kvCost.hotPrefixRequests)
	popular  *popularity         // router.kvCost.popularShare's counts; nil when off or not the time model
	pressure bool                // the scheduler reads Candidate.PrefillRate (router.kvCost.prefillPressureWindow)
	tiers    kvindex.TierWeights // credit for host/disk-tier hits (events path only)
	rates    *rates
	// objectives is name → priority, swapped whole by SetObjectives (see objectives.go).
	objectives atomic.Pointer[map[string]int]
	// syncIDs numbers committed decisions for Deps.Sync (ids start at 1).
	syncIDs atomic.Uint64
	// sizes caches each endpoint's block size (see blocksize.go); tickGen
	// invalidates it once per Tick, for sizes learnt from scraping.
	sizes   atomic.Pointer[sizeView]
	tickGen atomic.Uint64
	// cold skips re-reading the fleet for cold requests within a release pass.
	cold coldMemo
}

// New builds a router for a validated, defaulted config.
func New(cfg *v1.Config, d Deps) (*Router, error) {
	sched, err := scheduler.New(cfg.Router)
	if err != nil {
		return nil, err
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Tokenizer == nil {
		t, err := newTokenizer(&cfg.KV, d.Set)
		if err != nil {
			return nil, err
		}
		d.Tokenizer = t
	}
	if cfg.Router.WorkerHeaders {
		if err := endpoints.RequireWorkerIDs(d.Set.Snapshot()); err != nil {
			return nil, fmt.Errorf("router.workerHeaders: every endpoint needs a numeric workerId (Dynamo's worker instance id):\n%w", err)
		}
	}
	r := &Router{cfg: cfg, sched: sched, deps: d, sessions: newSessions(cfg.Router.Session.TTL.Duration),
		stride: cfg.KV.IndexStride(), bridge: cfg.KV.EventsBridge != nil && *cfg.KV.EventsBridge, sharers: sched.WantsSharers()}
	if cfg.KV.Observation != v1.ObservePredicted && cfg.KV.HostHitWeight != nil && cfg.KV.DiskHitWeight != nil {
		r.tiers = kvindex.TierWeights{Host: *cfg.KV.HostHitWeight, Disk: *cfg.KV.DiskHitWeight}
	}
	if k := cfg.Router.KVCost; sched.PricesByTime() && k.PopularShare != nil && k.PopularWindow != nil {
		r.popular = newPopularity(*k.PopularShare, k.PopularWindow.Duration)
	}
	if w := cfg.Router.KVCost.PrefillPressureWindow; sched.PricesByTime() && w != nil && w.Duration > 0 {
		// The tracker sees every dispatch, peers' included, so it keeps the
		// rate; it counts from here on.
		d.Active.SetPrefillWindow(w.Duration)
		r.pressure = true
	}
	r.initRates()
	r.SetObjectives(cfg.Objectives)
	r.watchMembership()
	if cfg.Admission.QueueThreshold != nil {
		r.gate = admission.NewGate[*Prepared](*cfg.Admission.QueueThreshold)
		o := admission.FromConfig(cfg.Admission)
		o.Pool = d.Pool
		r.queue = admission.NewQueue(o, r.canDispatch)
		if cfg.Admission.QueuePolicy == v1.QueueWSPT {
			r.queue.SetWork(r.PrefillWork)
		}
	}
	r.initQueueOrder()
	r.initBridges()
	telemetry.StartPool(d.Pool, cfg.KV.Observation)
	telemetry.TokenizerInfo.WithLabelValues(d.Tokenizer.Name(), strconv.FormatBool(d.Tokenizer.Exact())).Set(1)
	if _, remote := d.Tokenizer.(*tokenize.Pool); remote {
		d.Log.Info("tokenizer asks the pool's servers per request, falling back to approximate tokens when none answers within kv.tokenizerTimeout")
	} else if !d.Tokenizer.Exact() {
		d.Log.Info("tokenizer is approximate: block hashes and token counts estimate the engine's", "tokenizer", d.Tokenizer.Name())
	}
	filters, scorers, picker := sched.Plugins()
	d.Log.Info("router ready", "mode", cfg.Router.Mode, "filters", filters, "scorers", scorers, "picker", picker,
		"observation", cfg.KV.Observation,
		"queueThreshold", cfg.Admission.QueueThreshold, "lateAfter", cfg.Admission.LateAfterOrOff().String(),
		"lateWindow", cfg.Admission.LateWindowOrNone().String(), "blockSize", cfg.KV.BlockSize)
	return r, nil
}

// Mode is the router mode in use.
func (r *Router) Mode() string { return r.sched.Mode() }

// Notify tells the admission queue that capacity may have freed.
func (r *Router) Notify() {
	if r.queue != nil {
		r.queue.Notify()
	}
}

// Close wakes every queued request with a shutting-down error.
func (r *Router) Close() {
	if r.queue != nil {
		r.queue.Close()
	}
}

// Route implements route.Decider: prepare, wait for admission, choose.
// Choosing records what concurrent decisions read (the request, its prefill
// tokens and its predicted prefix on the primary), so the load view, the busy
// filter and admission see it at once; the rest of the bookkeeping (shared
// blocks, session pin, metrics) waits for the Decision's Commit, which the
// ext_proc stream calls after writing the answer.
func (r *Router) Route(ctx context.Context, in *route.Input) (route.Decision, error) {
	p, err := r.Prepare(ctx, in)
	if err != nil {
		return nil, r.reject(err)
	}
	if err := r.admit(ctx, p); err != nil {
		r.Abandon(p)
		return nil, r.reject(err)
	}
	d, err := r.choose(p)
	if err != nil {
		r.unreserve(p)
		r.Abandon(p)
		return nil, r.reject(err)
	}
	return d, nil // the stream commits it once the answer is on its way
}

func (r *Router) admit(ctx context.Context, p *Prepared) error {
	if r.queue == nil {
		return nil
	}
	start := r.deps.Now()
	item := &admission.Item[*Prepared]{Priority: p.Priority, ISLTokens: p.Req.PromptTokens, Value: p, Group: p.eligibilityGroup()}
	p.group = item.Group
	err := r.queue.Admit(ctx, item)
	telemetry.DecisionStage.WithLabelValues("queue").Observe(r.deps.Now().Sub(start).Seconds())
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("client went away while queued: %w", err)
	}
	return err
}

func (r *Router) reject(err error) error {
	var e *apierr.Error
	if errors.As(err, &e) {
		telemetry.Rejections.WithLabelValues(e.Type).Inc()
	}
	return err
}

// Run calls Tick every second until ctx ends.
func (r *Router) Run(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.Tick(r.deps.Now())
	}
}

// Tick is the periodic upkeep, the same in real time (Run) and in virtual
// time (the simulator): expiring predicted index entries, orphaned active
// work and idle session pins, and watching for silent KV events.
func (r *Router) Tick(now time.Time) {
	r.deps.Index.Expire(now)
	if n := r.deps.Active.Expire(now); n > 0 {
		r.deps.Log.Info("freed orphaned active work", "requests", n)
	}
	telemetry.SessionPins.Set(float64(r.sessions.expire(now)))
	if r.deps.Events != nil {
		r.deps.Events.Check(now)
	}
	if t, ok := r.deps.Sync.(interface{ Tick(time.Time) }); ok {
		t.Tick(now)
	}
	if r.order != nil {
		r.Notify() // a request held for a peer past replicaSync.queueYield may go now
	}
	// Work changes that no decision of this router publishes (a peer's,
	// applied by replica sync; orphans freed above) reach the gauges here.
	for _, e := range r.deps.Set.Snapshot().List {
		r.publishActive(e.Key())
	}
	r.tickGen.Add(1)
}
