package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Replica-sync metrics (pkg/replicasync). A process runs one replica, so the
// series carry no replica label. All are safe for concurrent use.
var (
	// ReplicaSyncSent counts this replica's events handed to the transport, by kind.
	ReplicaSyncSent = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "events_sent_total",
		Help: "This replica's lifecycle events handed to the peer transport, by kind.",
	}, []string{"kind"}))
	// ReplicaSyncDropped counts this replica's events dropped before sending
	// (queue_full: the transport did not keep up; the request path never waits).
	ReplicaSyncDropped = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "events_dropped_total",
		Help: "This replica's lifecycle events dropped instead of sent, by reason.",
	}, []string{"reason"}))
	// ReplicaSyncApplied counts peers' events applied to active work and the index, by kind.
	ReplicaSyncApplied = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "events_applied_total",
		Help: "Peers' lifecycle events applied, by kind.",
	}, []string{"kind"}))
	// ReplicaSyncDuplicate counts peers' events seen before (same origin and sequence).
	ReplicaSyncDuplicate = must(prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "events_duplicate_total",
		Help: "Peers' events ignored because their (origin, sequence) was already applied.",
	}))
	// ReplicaSyncIgnored counts peers' events not applied for another reason:
	// own (this replica's own event came back), stale (an origin's earlier
	// incarnation), unknown_request (no Added seen for it), unknown_endpoint
	// (not in this replica's pool), invalid.
	ReplicaSyncIgnored = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "events_ignored_total",
		Help: "Peers' events not applied, by reason (own, stale, unknown_request, unknown_endpoint, invalid).",
	}, []string{"reason"}))
	// ReplicaSyncMissed counts events a peer sent that never arrived (sequence gaps).
	ReplicaSyncMissed = must(prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "events_missed_total",
		Help: "Peers' events lost in transit, from gaps in their sequence numbers.",
	}))
	// ReplicaSyncRestarts counts peers seen starting over (a new incarnation).
	ReplicaSyncRestarts = must(prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "peer_restarts_total",
		Help: "Peer restarts detected; the old incarnation's work was freed.",
	}))
	// ReplicaSyncExpired counts peers' requests freed without their Freed
	// event: peer (the peer left or was partitioned), orphan (no event within
	// replicaSync.orphanTTL), restart.
	ReplicaSyncExpired = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "expired_requests_total",
		Help: "Peers' in-flight requests freed without their end event, by reason (peer, orphan, restart), and peers' queued requests whose end event was lost (waiting).",
	}, []string{"reason"}))
	// ReplicaSyncPeers is the number of peers whose work this replica counts.
	ReplicaSyncPeers = must(prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "peers",
		Help: "Peers whose in-flight work this replica currently counts.",
	}))
	// ReplicaSyncRemoteInFlight is the peers' requests in flight as this replica counts them.
	ReplicaSyncRemoteInFlight = must(prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "remote_inflight_requests",
		Help: "Requests routed by peers and still in flight, as applied here.",
	}))
	// ReplicaSyncPeerWaiting is the peers' requests waiting in their admission queues (replicaSync.queueOrder shared).
	ReplicaSyncPeerWaiting = must(prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "peer_waiting_requests",
		Help: "Requests waiting in peers' admission queues, as applied here: this replica's queue gives way to those ranked first.",
	}))
	// ReplicaSyncLag is how old a peer's batch was when it applied here.
	ReplicaSyncLag = must(prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "apply_lag_seconds",
		Buckets: []float64{0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5},
		Help: "Age of a peer's batch (its first live event's time; snapshots and waits skipped) when applied here: delivery delay, time in the sender's queue and clock skew between hosts. " +
			"Decisions closer together than this do not see each other.",
	}))
	// ReplicaSyncQueueSlack is the queue slack in force (replicaSync.queueSlack widened to the recent apply lag; past queueSlackMax, suspended).
	ReplicaSyncQueueSlack = must(prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "queue_slack_seconds",
		Help: "How much earlier a peer's request of the same priority and class must have been enqueued for this replica to hold its own for it: " +
			"replicaSync.queueSlack widened to the worst apply lag of the last one to two seconds. Above replicaSync.queueSlackMax the shared order is suspended: " +
			"this replica gives way to no peer until the lag comes back under.",
	}))
	// ReplicaSyncHolds is how long this replica's holds for peers' requests lasted, by how they ended.
	ReplicaSyncHolds = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "replicasync", Name: "queue_hold_seconds",
		// From well under one peer delivery (loopback: sub-millisecond) to past queueYield's default.
		Buckets: []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1},
		Help: "How long a request that could go was held while a peer's request ranked first (replicaSync.queueOrder shared), by how each hold ended: " +
			"peer_went (no peer request ranks first any more), room_taken (the room went before this request could use it), " +
			"yield_spent (replicaSync.queueYield ran out: the peers did not use the room; mostly this means the order is not paying).",
	}, []string{"outcome"}))
)
