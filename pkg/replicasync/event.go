// Package replicasync shares each picker replica's in-flight work and
// predicted prefixes with its peers, so every replica scores endpoints with
// the whole fleet's load and not only its own. It is a feed: it writes what
// peers report into pkg/activework and pkg/kvindex, and the router reads the
// merged state unchanged. The router tells it about its own decisions
// through Recorder. This package links no gRPC: the network transport lives
// in a subpackage, and the simulator uses an in-memory one.
//
// The flow: the router calls Recorder (a *Replica) on its own decisions; the
// Replica numbers each event and puts it on a bounded queue without waiting
// (a full queue drops and counts); Run hands queued events in batches to a
// Transport, which carries them to the peers; a peer's transport calls Apply
// with what it received. A joining replica applies a peer's Snapshot; a
// transport that loses a peer calls ExpirePeer.
//
// Apply's rules, per origin replica:
//   - an event whose Origin is this replica is never applied (it came back);
//   - an event whose (Origin, Seq) is at or below the last one applied is a
//     duplicate and is skipped, so a transport may resend freely but must
//     keep one origin's events in Seq order;
//   - a Seq gap (events lost in transit, or dropped at the origin's full
//     queue) is counted and otherwise tolerated: a lost Freed leaves work
//     that the orphan TTL frees, a lost Added under-counts until the
//     request's own Freed (ignored as unknown) ends it;
//   - a restart is a new Epoch (larger than the one seen): everything the
//     old incarnation added is freed and sequence tracking starts over;
//     events of an older Epoch are stale and skipped. A transport that does
//     not carry Epoch (zero) gets the fallback: Seq 1 after a higher Seq
//     means the origin started over;
//   - Seq 0 marks snapshot state rather than a step: it is applied
//     idempotently (an Added for a request already counted is ignored) and
//     does not move the origin's sequence.
package replicasync

import (
	"time"

	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/admission"
)

// Kind is one step of a routed request's lifecycle.
type Kind uint8

const (
	// KindAdded: the origin routed the request to Endpoint (Work and IndexChain set).
	KindAdded Kind = iota + 1
	// KindPrefillDone: the request's first token came (its prefill no longer counts).
	KindPrefillDone
	// KindFreed: the request ended (finished, failed or abandoned).
	KindFreed
	// KindPredicted: the origin recorded IndexChain at Endpoint as predicted
	// cache; no active work (a snapshot's recent prefixes).
	KindPredicted
	// KindWaiting: the request waits in the origin's admission queue (Model,
	// Priority, Class set; At is when it was queued; Endpoint is the one it
	// waits for room on, "" for any). Its KindAdded, or a KindLeft, ends the
	// wait; a later KindWaiting replaces it.
	KindWaiting
	// KindLeft: the request left the origin's queue without being routed
	// (timed out, shed, or its client went away).
	KindLeft
	// KindRefused: the request's endpoint answered it with an error status
	// before any output, so it cached none of the prompt: peers take back
	// the predicted prefix its KindAdded recorded. Its KindFreed follows.
	KindRefused

	lastKind = KindRefused
)

// Valid reports whether k is a kind this version knows.
func (k Kind) Valid() bool { return k >= KindAdded && k <= lastKind }

// String names the kind (metric labels, logs).
func (k Kind) String() string {
	switch k {
	case KindAdded:
		return "added"
	case KindPrefillDone:
		return "prefill_done"
	case KindFreed:
		return "freed"
	case KindPredicted:
		return "predicted"
	case KindWaiting:
		return "waiting"
	case KindLeft:
		return "left"
	case KindRefused:
		return "refused"
	}
	return "unknown"
}

// Event is one lifecycle step of a request that one replica routed.
type Event struct {
	// Origin is the replica that routed the request (its replica id).
	Origin string
	// Seq is Origin's event sequence number: it starts at 1 and grows by one
	// per event, so a peer applies each (Origin, Seq) once and sees gaps.
	Seq uint64
	// Epoch is Origin's incarnation (its start time in Unix nanoseconds): a
	// larger Epoch means the origin restarted. 0 means unknown.
	Epoch uint64
	Kind  Kind
	// Request is the origin-local request id.
	Request uint64
	// At is when the step happened on the origin (for expiry, not ordering).
	At time.Time
	// Endpoint is where the request went (KindAdded).
	Endpoint string
	// Work is the request's active work as the origin counted it (KindAdded);
	// Work.Blocks is the prompt's block chain.
	Work activework.Work
	// IndexChain is the predicted KV-index entries the origin recorded for
	// Endpoint (KindAdded, KindPredicted; nil on the events path, where
	// engines report to every replica).
	IndexChain []uint64
	// Model, Priority and Class place a waiting request in the fleet's
	// queue order (KindWaiting; see admission.Rank).
	Model    string
	Priority int
	Class    int
}

// Transport carries this replica's events to its peers. Run calls Broadcast
// from one goroutine, with batches in Seq order; the batch is the
// transport's to keep. Broadcast must not wait on a slow peer: it queues per
// peer with a bound and drops (and counts) past it, as the Replica's own
// queue does, since a slow peer must never hold back the others.
type Transport interface {
	Broadcast(evs []Event)
}

// Recorder is what the router reports about its own decisions. Calls never
// block the request path: a transport that cannot keep up drops and counts.
type Recorder interface {
	// Added: request id was routed to endpoint with work w; indexChain is
	// what the router recorded as predicted cache there (may be nil).
	Added(id uint64, endpoint string, w activework.Work, indexChain []uint64)
	// PrefillDone: request id had its first token.
	PrefillDone(id uint64)
	// Refused: request id's endpoint answered with an error before any
	// output (before its Freed).
	Refused(id uint64)
	// Freed: request id ended.
	Freed(id uint64)
}

// QueueOrder keeps the fleet's admission queues in one order: each replica
// tells its peers which of its requests wait and at what rank, and holds its
// own request back while a peer has one ranked before it waiting for the
// same model. Without it each replica serves its own third of the queue in
// order, and when capacity frees, the replica that hears first releases its
// best request, not the fleet's. A router whose Recorder also implements
// QueueOrder uses it.
type QueueOrder interface {
	// Waiting: request id waits in this replica's queue for model at rank,
	// for room on endpoint ("": on any). The id is the one its Added will
	// carry when it is routed. Called again when the endpoint changes.
	Waiting(id uint64, model, endpoint string, rank admission.Rank)
	// Left: request id left the queue without being routed.
	Left(id uint64)
	// Ahead reports whether a peer has a request for model waiting that
	// goes before rank and waits for room on endpoint, or with anyToo for
	// room on any endpoint (a cold request); endpoint "" (a request that
	// could go anywhere) counts every wait for the model. g is the tiering
	// of the queue rank waits in (admission.Item.Aging): peers' waits are
	// ordered in the same tiers.
	Ahead(model, endpoint string, anyToo bool, rank admission.Rank, g admission.Aging) bool
}
