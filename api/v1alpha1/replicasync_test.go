package v1alpha1

import (
	"reflect"
	"testing"
	"time"
)

// Parsing and validation of replicaSync are rows of TestParseAndValidate.

func TestReplicaSyncDefaultsKeepUserValues(t *testing.T) {
	c := Default()
	if c.ReplicaSync.Mode != ReplicaSyncOff || c.ReplicaSync.QueueLength != 8192 || c.ReplicaSync.OrphanTTL.Duration != 300*time.Second ||
		c.ReplicaSync.QueueOrder != QueueOrderShared || c.ReplicaSync.QueueYield.Duration != 2*time.Second ||
		c.ReplicaSync.QueueSlack.Duration != 5*time.Millisecond || c.ReplicaSync.QueueSlackMax.Duration != 50*time.Millisecond {
		t.Fatalf("defaults: %+v", c.ReplicaSync)
	}
	u := &Config{ReplicaSync: ReplicaSync{Mode: ReplicaSyncPeers, QueueLength: 5, MaxBatch: 7, OrphanTTL: D(time.Minute), SnapshotChains: 9,
		QueueOrder: QueueOrderLocal, QueueYield: D(time.Second), QueueSlack: D(time.Millisecond), QueueSlackMax: D(2 * time.Millisecond), ListenAddr: ":1", PortName: "p", PeerExpiry: D(time.Hour), Heartbeat: D(time.Minute), PeerQueue: 3,
		ReconnectMin: D(time.Second), ReconnectMax: D(time.Minute)}}
	want := u.ReplicaSync
	u.SetDefaults()
	if !reflect.DeepEqual(u.ReplicaSync, want) {
		t.Fatalf("defaults overwrote user values: %+v, want %+v", u.ReplicaSync, want)
	}
}
