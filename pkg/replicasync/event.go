// Package replicasync shares each picker replica's in-flight work and
// predicted prefixes with its peers, so every replica scores endpoints with
// the whole fleet's load and not only its own. It is a feed: it writes what
// peers report into pkg/activework and pkg/kvindex, and the router reads the
// merged state unchanged. The router tells it about its own decisions
// through Recorder. This package links no gRPC: the network transport lives
// in a subpackage, and the simulator uses an in-memory one.
package replicasync

import (
	"time"

	"github.com/kvpick/kvpick/pkg/activework"
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
)

// Event is one lifecycle step of a request that one replica routed.
type Event struct {
	// Origin is the replica that routed the request (its replica id).
	Origin string
	// Seq is Origin's event sequence number: it starts at 1 and grows by one
	// per event, so a peer applies each (Origin, Seq) once and sees gaps.
	Seq  uint64
	Kind Kind
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
	// Endpoint (KindAdded; nil on the events path, where engines report).
	IndexChain []uint64
}

// Recorder is what the router reports about its own decisions. Calls never
// block the request path: a transport that cannot keep up drops and counts.
type Recorder interface {
	// Added: request id was routed to endpoint with work w; indexChain is
	// what the router recorded as predicted cache there (may be nil).
	Added(id uint64, endpoint string, w activework.Work, indexChain []uint64)
	// PrefillDone: request id had its first token.
	PrefillDone(id uint64)
	// Freed: request id ended.
	Freed(id uint64)
}
