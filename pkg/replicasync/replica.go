package replicasync

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

var defaults = v1.Default()

// Options configures a Replica; zero tunables take api/v1alpha1's defaults.
type Options struct {
	// ID names this replica to its peers (the Origin of its events); required.
	ID string
	// Active receives peers' in-flight work; required.
	Active *activework.Tracker
	// Index receives peers' predicted prefixes (nil: none are applied).
	Index *kvindex.Index
	// Set, when not nil, limits applied work to endpoints this replica knows,
	// so a peer's stale view cannot recreate an endpoint that left the pool.
	Set *endpoints.Set
	// Now is the clock (default time.Now); the simulator passes virtual time.
	Now func() time.Time
	Log logr.Logger
	// Sync holds the queue length, batch size, orphan TTL and snapshot bound.
	Sync v1.ReplicaSync
	// PredictedTTL is the longest a predicted claim lasts
	// (v1alpha1.KV.LongestPredictedTTL): a snapshot carries only prefixes
	// recorded within it, and the index expires each by its endpoint's TTL.
	PredictedTTL time.Duration
	// MaxWait is the admission queue's longest wait (admission.maxQueueWait):
	// a peer's request still waiting after twice this lost its end event.
	MaxWait time.Duration
	// OnChange, when set, runs after a peer's queued request stopped
	// waiting (the router's Notify: a request held back may go now). It
	// runs without this Replica's locks held.
	OnChange func()
}

func (o *Options) setDefaults() {
	d := defaults.ReplicaSync
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sync.QueueLength <= 0 {
		o.Sync.QueueLength = d.QueueLength
	}
	if o.Sync.MaxBatch <= 0 {
		o.Sync.MaxBatch = d.MaxBatch
	}
	if o.Sync.OrphanTTL.Duration <= 0 {
		o.Sync.OrphanTTL = d.OrphanTTL
	}
	if o.Sync.QueueSlack.Duration <= 0 {
		o.Sync.QueueSlack = d.QueueSlack
	}
	if o.Sync.QueueSlackMax.Duration <= 0 {
		o.Sync.QueueSlackMax = d.QueueSlackMax
	}
	if o.Sync.SnapshotChains <= 0 {
		o.Sync.SnapshotChains = d.SnapshotChains
	}
	if o.PredictedTTL <= 0 {
		o.PredictedTTL = defaults.KV.LongestPredictedTTL()
	}
	if o.MaxWait <= 0 {
		o.MaxWait = defaults.Admission.MaxQueueWait.Duration
	}
}

// Replica is one picker's side of replica sync: it implements Recorder for
// its own router and applies its peers' events. Safe for concurrent use.
type Replica struct {
	opts  Options
	epoch uint64
	out   chan Event

	mu     sync.Mutex // the send side: sequence, own in-flight and waiting tables, recent prefixes
	seq    uint64
	own    map[uint64]ownRequest
	queued map[uint64]ownWait
	chains chainRing

	rmu     sync.Mutex // the apply side
	origins map[string]*origin
	remote  int // peers' requests counted

	bridges atomic.Pointer[func(endpoint string) bool] // see SetBridges

	waits peerWaits    // peers' requests waiting in their queues: a lock of its own (see peerWaits)
	lag   lagHigh      // recent apply lags (under rmu)
	slack atomic.Int64 // the queue slack in force, ns (see followLag); read without rmu by Ahead
}

// ownRequest is one of this replica's requests in flight, for snapshots.
type ownRequest struct {
	endpoint    string
	work        activework.Work
	at, last    time.Time
	prefillDone bool
}

// New returns a Replica; it sends nothing until Run or Flush.
func New(o Options) (*Replica, error) {
	if o.ID == "" {
		return nil, errors.New("replicasync: Options.ID is required (the replica's name to its peers)")
	}
	if o.Active == nil {
		return nil, errors.New("replicasync: Options.Active is required")
	}
	o.setDefaults()
	r := &Replica{opts: o, epoch: uint64(o.Now().UnixNano()), out: make(chan Event, o.Sync.QueueLength),
		own: map[uint64]ownRequest{}, queued: map[uint64]ownWait{}, chains: newChainRing(o.Sync.SnapshotChains),
		origins: map[string]*origin{}, waits: newPeerWaits()}
	r.slack.Store(int64(o.Sync.QueueSlack.Duration))
	telemetry.ReplicaSyncQueueSlack.Set(o.Sync.QueueSlack.Seconds())
	return r, nil
}

// SetBridges tells the replica which endpoints are on the events path with
// kv.eventsBridge: there a KindAdded's chain is a claim until the request's
// first token (kvindex.ClaimUnreported, taken back at its KindPrefillDone or
// KindFreed), not a prediction, and snapshots do not carry it. Replicas read
// the same engines' events, so each answers for its own view. The router
// calls it once, when it is built over this replica.
func (r *Replica) SetBridges(f func(endpoint string) bool) { r.bridges.Store(&f) }

// bridged reports whether endpoint's chains are bridge claims (SetBridges).
func (r *Replica) bridged(endpoint string) bool {
	f := r.bridges.Load()
	return f != nil && (*f)(endpoint)
}

// ID is this replica's name to its peers.
func (r *Replica) ID() string { return r.opts.ID }

// Added implements Recorder.
func (r *Replica) Added(id uint64, endpoint string, w activework.Work, indexChain []uint64) {
	now := r.opts.Now()
	r.mu.Lock()
	delete(r.queued, id) // routed: its wait (if it waited) ends with this Added
	r.own[id] = ownRequest{endpoint: endpoint, work: w, at: now, last: now}
	if !r.bridged(endpoint) {
		r.chains.push(endpoint, indexChain, now)
	}
	r.emit(Event{Kind: KindAdded, Request: id, At: now, Endpoint: endpoint, Work: w, IndexChain: indexChain})
	r.mu.Unlock()
}

// PrefillDone implements Recorder.
func (r *Replica) PrefillDone(id uint64) {
	now := r.opts.Now()
	r.mu.Lock()
	if o, ok := r.own[id]; ok {
		o.prefillDone, o.last = true, now
		r.own[id] = o
		r.emit(Event{Kind: KindPrefillDone, Request: id, At: now})
	}
	r.mu.Unlock()
}

// Refused implements Recorder.
func (r *Replica) Refused(id uint64) {
	now := r.opts.Now()
	r.mu.Lock()
	if _, ok := r.own[id]; ok {
		r.emit(Event{Kind: KindRefused, Request: id, At: now})
	}
	r.mu.Unlock()
}

// Freed implements Recorder.
func (r *Replica) Freed(id uint64) {
	now := r.opts.Now()
	r.mu.Lock()
	if _, ok := r.own[id]; ok {
		delete(r.own, id)
		r.emit(Event{Kind: KindFreed, Request: id, At: now})
	}
	r.mu.Unlock()
}

// emit numbers ev and queues it without waiting. Callers hold r.mu, so
// events enter the queue in Seq order; a drop still uses its number, and
// peers see the gap.
func (r *Replica) emit(ev Event) {
	r.seq++
	ev.Origin, ev.Seq, ev.Epoch = r.opts.ID, r.seq, r.epoch
	select {
	case r.out <- ev:
	default:
		telemetry.ReplicaSyncDropped.WithLabelValues("queue_full").Inc()
	}
}

// Run hands queued events to t in batches of up to Sync.MaxBatch until ctx
// ends. Call it once, from one goroutine.
func (r *Replica) Run(ctx context.Context, t Transport) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-r.out:
			r.send(t, r.drain(append(make([]Event, 0, 8), ev)))
		}
	}
}

// Flush hands every event queued now to t, in the caller's goroutine (the
// simulator's way to send at a known virtual time; Run does it in real time).
// It must not run concurrently with Run.
func (r *Replica) Flush(t Transport) {
	for len(r.out) > 0 {
		r.send(t, r.drain(nil))
	}
}

// drain appends queued events to batch, without waiting, up to MaxBatch.
func (r *Replica) drain(batch []Event) []Event {
	for len(batch) < r.opts.Sync.MaxBatch {
		select {
		case ev := <-r.out:
			batch = append(batch, ev)
		default:
			return batch
		}
	}
	return batch
}

func (r *Replica) send(t Transport, batch []Event) {
	if len(batch) == 0 {
		return
	}
	for i := range batch {
		telemetry.ReplicaSyncSent.WithLabelValues(batch[i].Kind.String()).Inc()
	}
	t.Broadcast(batch)
}
