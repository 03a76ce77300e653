package v1alpha1

import (
	"net"
	"time"
)

// PeerSecretEnv is the environment variable holding the peers' shared secret
// when replicaSync.secretFile is not set.
const PeerSecretEnv = "KVPICK_PEER_SECRET"

func (r *ReplicaSync) setTransportDefaults() {
	setStr(&r.ListenAddr, ":9004")
	setStr(&r.PortName, "peer")
	setDur(&r.PeerExpiry, 10*time.Second)
	setDur(&r.Heartbeat, time.Second)
	if r.PeerQueue == 0 {
		r.PeerQueue = 1024
	}
	setDur(&r.ReconnectMin, 100*time.Millisecond)
	setDur(&r.ReconnectMax, 2*time.Second)
}

func (r *ReplicaSync) validateTransport(p *problems) {
	if _, _, err := net.SplitHostPort(r.ListenAddr); err != nil {
		p.add("replicaSync.listenAddr", "want host:port or :port, got %q", r.ListenAddr)
	}
	for i, peer := range r.Peers {
		if _, _, err := net.SplitHostPort(peer); err != nil {
			p.add("replicaSync.peers", "entry %d: want host:port, got %q", i, peer)
		}
	}
	for _, d := range []struct {
		path string
		v    Duration
	}{{"replicaSync.peerExpiry", r.PeerExpiry}, {"replicaSync.heartbeat", r.Heartbeat}, {"replicaSync.reconnectMin", r.ReconnectMin}} {
		if d.v.Duration <= 0 {
			p.add(d.path, "must be positive")
		}
	}
	if r.ReconnectMax.Duration < r.ReconnectMin.Duration {
		p.add("replicaSync.reconnectMax", "must be at least reconnectMin (%s)", r.ReconnectMin.Duration)
	}
	if r.PeerExpiry.Duration > 0 && r.PeerExpiry.Duration < 2*r.Heartbeat.Duration {
		p.add("replicaSync.peerExpiry", "must be at least twice heartbeat (%s): a live peer would be expired", r.Heartbeat.Duration)
	}
	if r.PeerQueue < 1 {
		p.add("replicaSync.peerQueue", "must be at least 1")
	}
	if r.PortName == "" {
		p.add("replicaSync.portName", "must not be empty")
	}
}
