package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Replica sync transport metrics (pkg/replicasync/peer): per-peer counters of
// the gRPC streams between picker replicas. Outbound series are labelled by
// the peer's address, inbound ones by the peer's replica id. All are safe for
// concurrent use.
var (
	// PeerConnected is 1 while a stream to (out) or from (in) the peer is up.
	PeerConnected = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "peer_connected",
		Help: "1 while the replica sync stream to (direction=out) or from (direction=in) the peer is up.",
	}, []string{"peer", "direction"}))
	// PeerEventsSent counts events pushed to a peer (snapshots included).
	PeerEventsSent = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "peer_events_sent_total",
		Help: "Replica sync events sent to the peer, snapshots included.",
	}, []string{"peer"}))
	// PeerEventsReceived counts events received from an authenticated peer and applied.
	PeerEventsReceived = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "peer_events_received_total",
		Help: "Replica sync events received from an authenticated peer and applied.",
	}, []string{"peer"}))
	// PeerEventsDropped counts events not sent: the peer's queue was full
	// (reason queue_full; a snapshot follows to heal the peer's view).
	PeerEventsDropped = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "peer_events_dropped_total",
		Help: "Replica sync events dropped instead of blocking the request path, by reason.",
	}, []string{"peer", "reason"}))
	// PeerReconnects counts streams to a peer re-established after one was up.
	PeerReconnects = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "peer_reconnects_total",
		Help: "Replica sync streams to the peer re-established after a loss.",
	}, []string{"peer"}))
	// PeerRejected counts inbound streams or events refused: reason
	// unauthenticated, self (a replica dialled itself), origin (an event not
	// from the stream's replica), decode (malformed batch).
	PeerRejected = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "peer_rejected_total",
		Help: "Inbound replica sync streams or events refused, by reason.",
	}, []string{"reason"}))
	// PeerExpired counts peers whose entries were expired after their stream stayed down.
	PeerExpired = must(prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "peer_expired_total",
		Help: "Peers whose in-flight entries were expired because their stream stayed down past the bound.",
	}))
)

// ForgetPeer drops a peer's series (it left the peer set or was expired).
func ForgetPeer(peer string) {
	l := prometheus.Labels{"peer": peer}
	PeerConnected.DeletePartialMatch(l)
	PeerEventsSent.DeletePartialMatch(l)
	PeerEventsReceived.DeletePartialMatch(l)
	PeerEventsDropped.DeletePartialMatch(l)
	PeerReconnects.DeletePartialMatch(l)
}
