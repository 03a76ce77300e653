package v1alpha1

import "time"

// Replica-sync modes.
const (
	ReplicaSyncOff   = "off"   // this replica counts only its own decisions
	ReplicaSyncPeers = "peers" // replicas exchange in-flight work and predicted prefixes
)

// Queue orders across replicas (replicaSync.queueOrder).
const (
	QueueOrderShared = "shared" // the fleet's queued requests go in one order
	QueueOrderLocal  = "local"  // each replica releases its own queue in its own order
)

// ReplicaSync configures how several picker replicas share one view of the
// fleet's work (pkg/replicasync). The core fields are below; the peer list,
// authentication and TLS of the peer transport sit beside them.
type ReplicaSync struct {
	// Mode is "off" (default) or "peers". Off, each replica sees only the
	// work it routed itself, so N replicas each under-count load by about
	// (N-1)/N and spread a shared prefix N ways.
	Mode string `json:"mode"`
	// QueueLength bounds this replica's events waiting to be sent (default
	// 8192). Past it events are dropped and counted, never waited for: longer
	// rides out a slower transport burst, at the memory of that many events.
	QueueLength int `json:"queueLength"`
	// MaxBatch is the most events sent in one message (default 256). Larger
	// batches cost fewer messages under load, at a bigger message each.
	MaxBatch int `json:"maxBatch"`
	// OrphanTTL frees a peer's request that has had no event for this long
	// (default 300s, as kv.activeWorkTTL): a Freed lost in transit. Shorter
	// heals a lost event sooner but may free a long request that is still
	// decoding (its peer sends nothing between first token and end).
	OrphanTTL Duration `json:"orphanTTL"`
	// SnapshotChains bounds the recent predicted-prefix records kept for a
	// joining peer's snapshot (default 4096). More warms a new replica's
	// predicted view more fully; each record holds its prompt's block hashes.
	SnapshotChains int `json:"snapshotChains"`
	// QueueOrder is "shared" (default) or "local". Local: each replica
	// releases its own share of the queue in its own order. Shared:
	// replicas tell each other which requests wait, at what rank and for
	// room on which endpoint, and a replica holds its own request while a
	// peer has one ranked before it waiting for that room (at most
	// queueYield in all), so the fleet's queue drains in one order. It
	// costs a small event per request that waits. In routebench (5 ms sync
	// delay, seeds 1-3) shared keeps three replicas within 5 % of one
	// replica's p95 on brief, brief-import and shared-prefix, where local
	// is 17-30 % over on the first two; in real time (README "Several
	// replicas") it is as good as local or a little better. Local sends no
	// waiting events and never holds a request that could go.
	QueueOrder string `json:"queueOrder"`
	// QueueYield bounds how long a replica holds back a request it could
	// release for peers' requests ranked before it, summed over the
	// request's holds (default 2s): the most shared order adds to any
	// request's wait. A peer normally releases its request within the sync
	// delay; the bound covers a peer whose request cannot use the free
	// capacity (another LoRA adapter's endpoints, a different config
	// mid-upgrade) or a view of the peers that lags. Longer keeps the order
	// through slow peers and bursts; shorter idles less when a peer's
	// request cannot go. In routebench, 250ms left three replicas'
	// brief-import p95 +7.7 % over one replica's at seed 2 (a burst of
	// long documents queues long enough to spend it); 500ms, +0.7 %. With
	// admission.lateAfter on, 500ms let late documents go on top of
	// peers' on-time ones once spent, crowding the endpoints the shared
	// requests wait for (+10.7 % at seed 1); 1s, +2.3 %; 2s, +0.4 %.
	QueueYield Duration `json:"queueYield"`
	// QueueSlack is how much earlier a peer's request of the same priority
	// and size class must have been enqueued for this replica to hold its
	// own for it (default 5ms; 0 means the default; a higher priority or a
	// smaller class always goes first). A hold lasts until the peer's
	// replica hears of the room and this one hears the peer took it, up to
	// two sync delays of idle room, which buys nothing when the two arrived
	// a moment apart. In routebench, on short requests at 270 req/s with a
	// 10 ms sync delay, holding for any earlier arrival took three replicas'
	// p95 from 0.13 to 0.47 s; 5ms kept 0.13 s (at a 20 ms delay it takes
	// 25ms). Smaller keeps arrival order across replicas more exactly (10ms
	// and 25ms each left a brief cell over the 5 % target that 5ms meets);
	// larger idles less when the sync delay grows.
	QueueSlack Duration `json:"queueSlack"`
	// QueueSlackMax is how far the slack follows the sync delay (default
	// 50ms; 0 means the default; at or below queueSlack the slack is fixed
	// and never suspends). The slack in force
	// is the worst apply lag of peers' batches over the last one to two
	// seconds (kvpick_replicasync_apply_lag_seconds), at least queueSlack: a
	// peer's request that left its queue still looks waiting for one lag,
	// and a slack below the lag holds requests for those, with the room
	// idle (on a saturated host three replicas served 870 req/s where 999
	// were offered at a 5ms fixed slack). Past queueSlackMax the replica
	// gives way to no peer (as queueOrder local) until the lag comes back
	// under: its view of the peers' queues is too old to order by. Larger
	// keeps the shared order over slower links, at more idle room per hold;
	// smaller falls back to the local order sooner. Clock skew between
	// hosts counts as lag.
	QueueSlackMax Duration `json:"queueSlackMax"`

	// The peer transport (pkg/replicasync/peer; defaults and validation in
	// replicasync_transport.go).

	// ID names this replica to its peers; empty means the host name (the pod
	// name in Kubernetes) and the listen port. Unique per replica.
	ID string `json:"id,omitempty"`
	// ListenAddr is where peers push their events (default ":9004"): a port of
	// its own, not the ext_proc one, so client certificates can be required
	// of peers without asking Envoy for one, and the port can be firewalled
	// to the picker's own pods. It uses the gRPC server's TLS (server.*).
	ListenAddr string `json:"listenAddr"`
	// Peers are the other replicas' listen addresses (host:port; --peers).
	// This replica's own address may be listed: it is recognised and skipped.
	Peers []string `json:"peers,omitempty"`
	// Service, in Kubernetes mode, is the picker's own Service: the peers are
	// the ready addresses of its EndpointSlices (port PortName), followed live.
	Service string `json:"service,omitempty"`
	// PortName is the EndpointSlice port that carries peer traffic (default "peer").
	PortName string `json:"portName"`
	// SecretFile holds the shared secret every replica sends and checks
	// (constant-time) before applying a peer's events; the environment
	// variable KVPICK_PEER_SECRET is used when no file is set. A secret or a
	// ClientCAFile (or both) is required: unauthenticated peers could inject load.
	SecretFile string `json:"secretFile,omitempty"`
	// ClientCAFile turns on mutual TLS: a peer must present a certificate
	// this CA signed, and this replica presents server.certFile as its own.
	ClientCAFile string `json:"clientCAFile,omitempty"`
	// PeerExpiry is how long a peer's stream may stay down before the work
	// and sequence state it contributed are dropped (default 10s). Shorter
	// heals a dead replica's phantom load sooner; longer rides out blips
	// without losing the peer's view (a reconnect resyncs by snapshot anyway).
	PeerExpiry Duration `json:"peerExpiry"`
	// Heartbeat is how often a receiver tells a sender it is alive (default
	// 1s); a silent peer is detected within about twice this, at one small
	// message per period per peer.
	Heartbeat Duration `json:"heartbeat"`
	// PeerQueue bounds the batches waiting for one peer (default 1024); past
	// it events to that peer are dropped and counted, and a snapshot follows.
	// Longer rides out a slower peer, at that many batches of memory each.
	PeerQueue int `json:"peerQueue"`
	// ReconnectMin and ReconnectMax bound the jittered, doubling redial delay
	// (defaults 100ms and 2s): shorter rejoins sooner after a fault, at more
	// dial attempts towards a peer that is gone.
	ReconnectMin Duration `json:"reconnectMin"`
	ReconnectMax Duration `json:"reconnectMax"`
}

func (r *ReplicaSync) setDefaults() {
	setStr(&r.Mode, ReplicaSyncOff)
	if r.QueueLength == 0 {
		r.QueueLength = 8192
	}
	if r.MaxBatch == 0 {
		r.MaxBatch = 256
	}
	setDur(&r.OrphanTTL, 300*time.Second)
	if r.SnapshotChains == 0 {
		r.SnapshotChains = 4096
	}
	setStr(&r.QueueOrder, QueueOrderShared)
	setDur(&r.QueueYield, 2*time.Second)
	setDur(&r.QueueSlack, 5*time.Millisecond)
	setDur(&r.QueueSlackMax, 50*time.Millisecond)
	r.setTransportDefaults()
}

func (r *ReplicaSync) validate(p *problems) {
	if r.Mode != ReplicaSyncOff && r.Mode != ReplicaSyncPeers {
		p.add("replicaSync.mode", "must be %q or %q, not %q", ReplicaSyncOff, ReplicaSyncPeers, r.Mode)
	}
	if r.QueueLength < 1 {
		p.add("replicaSync.queueLength", "must be at least 1")
	}
	if r.MaxBatch < 1 {
		p.add("replicaSync.maxBatch", "must be at least 1")
	}
	if r.OrphanTTL.Duration <= 0 {
		p.add("replicaSync.orphanTTL", "must be positive")
	}
	if r.SnapshotChains < 0 {
		p.add("replicaSync.snapshotChains", "must not be negative")
	}
	if r.QueueOrder != QueueOrderShared && r.QueueOrder != QueueOrderLocal {
		p.add("replicaSync.queueOrder", "must be %q or %q, not %q", QueueOrderShared, QueueOrderLocal, r.QueueOrder)
	}
	if r.QueueYield.Duration <= 0 {
		p.add("replicaSync.queueYield", "must be positive")
	}
	if r.QueueSlack.Duration < 0 {
		p.add("replicaSync.queueSlack", "must not be negative")
	}
	if r.QueueSlackMax.Duration < 0 {
		p.add("replicaSync.queueSlackMax", "must not be negative")
	}
	r.validateTransport(p)
}
