package v1alpha1

import "time"

// Replica-sync modes.
const (
	ReplicaSyncOff   = "off"   // this replica counts only its own decisions
	ReplicaSyncPeers = "peers" // replicas exchange in-flight work and predicted prefixes
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
}
