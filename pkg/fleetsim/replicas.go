package fleetsim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/replicasync"
	"github.com/kvpick/kvpick/pkg/request"
)

// ReplicaOptions describe several picker replicas behind one gateway.
type ReplicaOptions struct {
	// N is the number of replicas (each its own router, active work, index).
	N int
	// Sync joins them with replica sync through an in-memory transport.
	Sync bool
	// Delay is how long an event takes from one replica to the others, in
	// virtual time (negative: 0).
	Delay time.Duration
	// Jitter adds a uniform random [0, Jitter) to each batch's delay, in
	// order per sender as a stream keeps it. Without it two batches a
	// replica sends at one virtual time (a prefill done, then the request
	// its queue released into the room) always arrive together; in real
	// time the second trails the first, and a peer may act in between.
	Jitter time.Duration
}

// Replicas runs spec as o.N replicas: each arrival goes to the next replica
// in turn, as a gateway spreads streams over the picker's pods; the engines,
// their scraped load and their KV events are shared, as every replica
// scrapes and subscribes to every engine. With o.Sync each kvpick replica
// tells the others its decisions' lifecycles after o.Delay. Each replica
// has its own admission queue, as each picker process does.
func Replicas(spec Spec, o ReplicaOptions) Spec {
	if o.N <= 1 && !o.Sync {
		return spec
	}
	return Spec{Name: spec.Name, Build: func(env Env) (Policy, error) {
		rp := &replicated{}
		if o.Sync {
			rp.bus = &syncBus{delay: max(o.Delay, 0), jitter: max(o.Jitter, 0), now: env.Now,
				rng: newBusRand(env.Seed)}
		}
		for i := range max(o.N, 1) {
			e := env
			e.Seed = env.Seed + int64(i)
			e.Replica, e.Bus = fmt.Sprintf("replica-%d", i), rp.bus
			p, err := spec.Build(e)
			if err != nil {
				return nil, fmt.Errorf("replica %d: %w", i, err)
			}
			rp.pols = append(rp.pols, p)
		}
		if rp.bus != nil && len(rp.bus.reps) != len(rp.pols) {
			return nil, fmt.Errorf("replica sync: %d of %d replicas joined (only kvpick policies sync)", len(rp.bus.reps), len(rp.pols))
		}
		return rp, nil
	}}
}

// replicated is Policy over several replicas.
type replicated struct {
	pols []Policy
	bus  *syncBus // nil without sync
	next int
}

type replicaPending struct {
	Pending
	i int
}

func (r *replicated) Prepare(a *Arrival) (Pending, error) {
	i := r.next % len(r.pols)
	r.next++
	r.deliver()
	p, err := r.pols[i].Prepare(a)
	if err != nil {
		return nil, err
	}
	return replicaPending{p, i}, nil
}

func (r *replicated) Admission() *admission.Options { return r.pols[0].Admission() }

// Queues is one admission queue per replica.
func (r *replicated) Queues() int { return len(r.pols) }

// QueueOf is the queue of the replica that prepared p.
func (r *replicated) QueueOf(p Pending) int { return p.(replicaPending).i }

// PrefillWork is the wspt queue key from the replica that prepared p (0 when
// its policy has none: the queue keeps arrival order then).
func (r *replicated) PrefillWork(p Pending) int {
	rp := p.(replicaPending)
	w, ok := r.pols[rp.i].(prefillWorker)
	if !ok {
		return 0
	}
	r.deliver()
	return w.PrefillWork(rp.Pending)
}

// Waits tells the replica that prepared p where it waits.
func (r *replicated) Waits(p Pending, rank admission.Rank, g admission.Aging) {
	rp := p.(replicaPending)
	if w, ok := r.pols[rp.i].(waiter); ok {
		w.Waits(rp.Pending, rank, g)
		r.flush(rp.i)
	}
}

// Abandon tells the replica that prepared p it left the queue unrouted.
func (r *replicated) Abandon(p Pending) {
	rp := p.(replicaPending)
	if w, ok := r.pols[rp.i].(waiter); ok {
		w.Abandon(rp.Pending)
		r.flush(rp.i)
	}
}

func (r *replicated) Admissible(p Pending) bool {
	rp := p.(replicaPending)
	r.deliver()
	ok := r.pols[rp.i].Admissible(rp.Pending)
	r.flush(rp.i) // a request that starts to wait is announced
	return ok
}

func (r *replicated) Dispatch(p Pending) (Ticket, error) {
	rp := p.(replicaPending)
	r.deliver()
	t, err := r.pols[rp.i].Dispatch(rp.Pending)
	r.flush(rp.i)
	if err != nil {
		return nil, err
	}
	return replicaTicket{Ticket: t, r: r, i: rp.i}, nil
}

func (r *replicated) WantsEvents() bool { return r.pols[0].WantsEvents() }

func (r *replicated) HandleEvents(endpoint string, b kvevents.Batch) {
	for _, p := range r.pols {
		p.HandleEvents(endpoint, b)
	}
}

func (r *replicated) Tick(now time.Time) {
	r.deliver()
	for i, p := range r.pols {
		p.Tick(now)
		r.flush(i)
	}
}

func (r *replicated) deliver() {
	if r.bus != nil {
		r.bus.deliver()
	}
}

func (r *replicated) flush(i int) {
	if r.bus != nil {
		r.bus.flush(i)
	}
}

// replicaTicket sends what its replica recorded after each lifecycle step.
type replicaTicket struct {
	Ticket
	r *replicated
	i int
}

func (t replicaTicket) FirstToken()           { t.Ticket.FirstToken(); t.r.flush(t.i) }
func (t replicaTicket) Progress(n int)        { t.Ticket.Progress(n); t.r.flush(t.i) }
func (t replicaTicket) Usage(u request.Usage) { t.Ticket.Usage(u); t.r.flush(t.i) }
func (t replicaTicket) Done(err error)        { t.Ticket.Done(err); t.r.flush(t.i) }

// syncBus is the in-memory transport between simulated replicas: a batch a
// replica sends at virtual time t reaches every other replica at t+delay
// (plus up to jitter, never before that sender's previous batch).
// Delivery is lazy but exact: the replicas' state is only read when the
// simulator calls the policy, and every call first delivers what is due by
// then (the queue is kept in due order), each batch applied at its due time
// on the replicas' clock (see clock).
type syncBus struct {
	delay, jitter time.Duration
	now           func() time.Time
	rng           *rand.Rand
	reps          []*replicasync.Replica
	queue         []transit         // in due order
	last          map[int]time.Time // per sender, its last batch's due time
	applying      time.Time         // the due time of the batch being applied (zero: none)
}

// clock is a replica's clock on the bus: the virtual time, except while a
// batch is applied, when it is the batch's due time. A batch applied later
// than due (delivery waits for the next call) is then recorded as a real
// receiver would have recorded it: its work starting, its waits seen and its
// apply lag measured at arrival, not at the next call.
func (b *syncBus) clock(now func() time.Time) func() time.Time {
	return func() time.Time {
		if !b.applying.IsZero() {
			return b.applying
		}
		return now()
	}
}

type transit struct {
	due  time.Time
	from int
	evs  []replicasync.Event
}

// join adds a replica; it is numbered in the order replicas join.
func (b *syncBus) join(r *replicasync.Replica) { b.reps = append(b.reps, r) }

func (b *syncBus) flush(i int) { b.reps[i].Flush(busSender{b, i}) }

func (b *syncBus) deliver() {
	now := b.now()
	n := 0
	for ; n < len(b.queue) && !b.queue[n].due.After(now); n++ {
		t := &b.queue[n]
		b.applying = t.due
		for j, r := range b.reps {
			if j != t.from {
				r.Apply(b.reps[t.from].ID(), t.evs)
			}
		}
		b.applying = time.Time{}
	}
	if n > 0 {
		b.queue = append(b.queue[:0], b.queue[n:]...)
	}
}

// newBusRand is the bus's jitter source: deterministic per run seed.
func newBusRand(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0x5eed)) }

// busSender is one replica's Transport onto the bus.
type busSender struct {
	b    *syncBus
	from int
}

func (s busSender) Broadcast(evs []replicasync.Event) {
	b := s.b
	due := b.now().Add(b.delay)
	if b.jitter > 0 {
		due = due.Add(time.Duration(b.rng.Int64N(int64(b.jitter))))
		if b.last == nil {
			b.last = map[int]time.Time{}
		}
		if l := b.last[s.from]; due.Before(l) {
			due = l
		}
		b.last[s.from] = due
	}
	i := len(b.queue)
	for i > 0 && b.queue[i-1].due.After(due) {
		i--
	}
	b.queue = slices.Insert(b.queue, i, transit{due: due, from: s.from, evs: evs})
}
