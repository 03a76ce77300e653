package fleetsim

import (
	"time"

	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/request"
	"github.com/kvpick/kvpick/pkg/workload"
)

// Arrival is a request as a policy sees it when it arrives: what a client
// sends, no more. Valid only during Prepare: the simulator reuses buffers,
// so a policy must not keep Tokens or Text's result.
type Arrival struct {
	ID    int
	Model string
	// Tokens is the prompt's exact token ids. Only a policy that has exact
	// tokens in production (an engine's tokenizer, e.g. to match its KV
	// events) may read them; every other policy reads Text.
	Tokens []uint32
	// MaxTokens is max_tokens as the client sends it: a cap, 0 when it sends
	// none. The true output length is the engine's to find out.
	MaxTokens int
	Session   string
	text      *[]byte // render buffer, owned by the simulator
	rendered  bool
}

// Text is the prompt as the client sends it (see workload.AppendText),
// rendered on first use.
func (a *Arrival) Text() []byte {
	if a.text == nil {
		a.text = new([]byte)
	}
	if !a.rendered {
		*a.text = workload.AppendText((*a.text)[:0], a.Tokens)
		a.rendered = true
	}
	return *a.text
}

// Policy routes requests in the simulator. A Policy is used by one
// simulation goroutine only. The simulator calls Prepare on arrival, then
// (when Admission is non-nil) holds the request in an admission.Core until
// Admissible says it may go, then Dispatch.
type Policy interface {
	// Prepare turns an arrival into the policy's pending request, or rejects it.
	Prepare(a *Arrival) (Pending, error)
	// Admission returns the admission queue's limits, or nil when the policy
	// dispatches every request at once.
	Admission() *admission.Options
	// Admissible reports whether p may be dispatched now; when true it may
	// reserve capacity that Dispatch then releases.
	Admissible(p Pending) bool
	// Dispatch chooses p's endpoint. Errors are rejections (*apierr.Error).
	Dispatch(p Pending) (Ticket, error)
	// WantsEvents reports whether the policy consumes engines' KV events.
	WantsEvents() bool
	// HandleEvents delivers one endpoint's KV event batch.
	HandleEvents(endpoint string, b kvevents.Batch)
	// Tick runs periodic upkeep (index expiry).
	Tick(now time.Time)
}

// prefillWorker is a Policy whose admission queue orders by prefill work
// (wspt): PrefillWork is p's prompt tokens no endpoint holds cached.
type prefillWorker interface {
	PrefillWork(p Pending) int
}

// queueSplitter is a Policy whose requests wait in one of several admission
// queues: several picker replicas each hold their own requests.
type queueSplitter interface {
	Queues() int
	QueueOf(p Pending) int
}

// waiter is a Policy that hears where its requests wait in the queue and
// when one leaves it unrouted (timed out or shed), as kvpick's shared queue
// order across replicas needs.
type waiter interface {
	Waits(p Pending, rank admission.Rank, g admission.Aging)
	Abandon(p Pending)
}

// Pending is a prepared request; only its policy reads it.
type Pending interface {
	// PromptTokens is the prompt length, for the queue's pending-token gauge.
	PromptTokens() int
	// Priority orders the admission queue.
	Priority() int
}

// Ticket is one dispatched request's lifecycle, in production's order:
// FirstToken once, Progress as tokens come, Usage and Done at the end.
type Ticket interface {
	Endpoint() string
	FirstToken()
	Progress(outputTokens int)
	Usage(u request.Usage)
	Done(err error)
}

// Env is what a policy is built against: the fleet's candidate set (loads
// are updated by the simulator's scrapes), the virtual clock and a seed.
type Env struct {
	Set   *endpoints.Set
	Now   func() time.Time
	Seed  int64
	Model string
	// Capacity is each endpoint's capacity (KV blocks, block size), by key.
	Capacity map[string]endpoints.Capacity
	// Replica names this instance when several run (see Replicas); Bus, when
	// not nil, is the replica-sync transport a kvpick policy joins.
	Replica string
	Bus     *syncBus
}

// Spec names a policy and builds a fresh instance for one run.
type Spec struct {
	Name  string
	Build func(env Env) (Policy, error)
}
