package fleetsim

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/go-logr/logr"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/kvfeed"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/replicasync"
	"github.com/kvpick/kvpick/pkg/request"
	"github.com/kvpick/kvpick/pkg/route"
	"github.com/kvpick/kvpick/pkg/router"
)

// KVPick is a policy that is the picker itself: pkg/router with its
// scheduler, admission predicate, KV index and active-work tracker, built
// from a v1alpha1 config (defaults, then configure, then the run's seed when
// configure left Router.Seed unset, then validation). The simulator plays
// the ext_proc server's part: it calls Prepare, runs the admission queue,
// Decide, and reports the response's first token, progress, usage and end.
func KVPick(name string, configure func(*v1.Config)) Spec {
	return Spec{Name: name, Build: func(env Env) (Policy, error) {
		cfg := &v1.Config{} // defaults after the caller's settings, as a config file gets them
		if configure != nil {
			configure(cfg)
		}
		if cfg.Router.Seed == 0 {
			cfg.Router.Seed = env.Seed
		}
		cfg.SetDefaults()
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		return newKVPick(name, cfg, env)
	}}
}

type kvpick struct {
	cfg    *v1.Config
	r      *router.Router
	active *activework.Tracker
	feed   *kvfeed.Feed // nil unless on the events path
}

func newKVPick(name string, cfg *v1.Config, env Env) (*kvpick, error) {
	ix := kvindex.New(kvindex.OptionsFor(&cfg.KV))
	keys := make([]string, 0, len(env.Capacity))
	for k := range env.Capacity {
		keys = append(keys, k)
	}
	sort.Strings(keys) // registration order fixes index ids: keep runs reproducible
	for _, k := range keys {
		ix.SetCapacity(k, env.Capacity[k].IndexEntries(cfg.KV.IndexStride()))
	}
	active := activework.New(cfg.KV.ActiveWorkTTL.Duration, nil)
	k := &kvpick{cfg: cfg, active: active}
	if cfg.KV.Observation == v1.ObserveEvents {
		k.feed = kvfeed.New(kvfeed.Options{Set: env.Set, Index: ix, Now: env.Now, Log: logr.Discard(), Pool: name,
			SilenceAfter:   cfg.KV.EventsSilenceAfter.Duration,
			UnmatchedAfter: cfg.KV.UnmatchedAlarmAfter, ProbeSettle: cfg.KV.UnmatchedProbeSettle.Duration})
	}
	deps := router.Deps{Set: env.Set, Index: ix, Active: active, Now: env.Now, Log: logr.Discard(), Pool: name, Events: k.feed}
	if env.Bus != nil {
		rep, err := replicasync.New(replicasync.Options{ID: env.Replica, Active: active, Index: ix, Set: env.Set, Now: env.Bus.clock(env.Now),
			Log: logr.Discard(), Sync: cfg.ReplicaSync, PredictedTTL: cfg.KV.LongestPredictedTTL(),
			MaxWait: cfg.Admission.MaxQueueWait.Duration})
		if err != nil {
			return nil, err
		}
		env.Bus.join(rep)
		deps.Sync = rep
	}
	r, err := router.New(cfg, deps)
	if err != nil {
		return nil, err
	}
	k.r = r
	return k, nil
}

type kvPending struct{ p *router.Prepared }

func (k kvPending) PromptTokens() int { return k.p.Req.PromptTokens }
func (k kvPending) Priority() int     { return k.p.Priority }

func (k *kvpick) Prepare(a *Arrival) (Pending, error) {
	req := &request.Request{Kind: request.KindCompletions, Model: a.Model, MaxTokens: a.MaxTokens}
	if k.exactTokens() {
		req.PromptTokenIDs = a.Tokens
	} else {
		req.Prompt = a.Text()
	}
	in := &route.Input{Path: "/v1/completions", Headers: map[string]string{}, Request: req}
	if a.Session != "" {
		in.Headers[k.cfg.Router.Session.Header] = a.Session
	}
	p, err := k.r.Prepare(context.Background(), in)
	if err != nil {
		return nil, err
	}
	return kvPending{p}, nil
}

// exactTokens reports whether this configuration sees the engine's token
// ids in production: only with KV events, whose hashes need them (a remote
// or engine-matched tokenizer). Otherwise the picker tokenizes the text.
func (k *kvpick) exactTokens() bool { return k.cfg.KV.Observation == v1.ObserveEvents }

func (k *kvpick) Admission() *admission.Options {
	if k.cfg.Admission.QueueThreshold == nil {
		return nil
	}
	o := admission.FromConfig(k.cfg.Admission)
	return &o
}

// PrefillWork is the wspt queue order's key for p (see router.PrefillWork).
func (k *kvpick) PrefillWork(p Pending) int { return k.r.PrefillWork(p.(kvPending).p) }

func (k *kvpick) Admissible(p Pending) bool { return k.r.Admissible(p.(kvPending).p) }

// Waits tells the router where p waits in the queue (see router.Waits).
func (k *kvpick) Waits(p Pending, rank admission.Rank, g admission.Aging) {
	k.r.Waits(p.(kvPending).p, rank, g)
}

// Abandon tells the router p left the queue unrouted.
func (k *kvpick) Abandon(p Pending) { k.r.Abandon(p.(kvPending).p) }

func (k *kvpick) Dispatch(p Pending) (Ticket, error) {
	pp := p.(kvPending).p
	d, err := k.r.Decide(pp)
	if err != nil {
		return nil, err
	}
	return kvTicket{d}, nil
}

func (k *kvpick) WantsEvents() bool { return k.feed != nil }

func (k *kvpick) HandleEvents(endpoint string, b kvevents.Batch) {
	if k.feed != nil {
		k.feed.HandleBatch(endpoint, b)
	}
}

// Tick is the router's periodic upkeep, the same Router.Run runs in real time.
func (k *kvpick) Tick(now time.Time) { k.r.Tick(now) }

// kvTicket is the router's Decision seen as a Ticket.
type kvTicket struct{ d *router.Decision }

func (t kvTicket) Endpoint() string      { return t.d.Endpoints()[0] }
func (t kvTicket) FirstToken()           { t.d.FirstToken() }
func (t kvTicket) Progress(n int)        { t.d.Progress(n) }
func (t kvTicket) Usage(u request.Usage) { t.d.Usage(u) }
func (t kvTicket) Done(err error) {
	if err != nil { // the engine refused it (sim.dispatch): as an error status through ext_proc
		t.d.Refused()
	}
	t.d.Done(err)
}
