package v1alpha1

import (
	"strings"
	"testing"
	"time"
)

func TestReplicaSyncParseAndValidate(t *testing.T) {
	cases := []struct {
		name    string
		yaml    string
		wantErr []string
	}{
		{"default is off", ``, nil},
		{"peers", "replicaSync:\n  mode: peers\n  queueLength: 16\n  orphanTTL: 1m\n", nil},
		{"unknown mode", "replicaSync:\n  mode: gossip\n", []string{"replicaSync.mode", "gossip"}},
		{"bad numbers all at once", "replicaSync:\n  queueLength: -1\n  maxBatch: -2\n  snapshotChains: -3\n  orphanTTL: -1s\n",
			[]string{"replicaSync.queueLength", "replicaSync.maxBatch", "replicaSync.snapshotChains", "replicaSync.orphanTTL"}},
		{"unknown key", "replicaSync:\n  mood: peers\n", []string{"mood"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.yaml))
			if err == nil {
				c.SetDefaults()
				err = c.Validate()
			}
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error naming %v", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

func TestReplicaSyncDefaultsKeepUserValues(t *testing.T) {
	c := Default()
	if c.ReplicaSync.Mode != ReplicaSyncOff || c.ReplicaSync.QueueLength != 8192 || c.ReplicaSync.OrphanTTL.Duration != 300*time.Second {
		t.Fatalf("defaults: %+v", c.ReplicaSync)
	}
	u := &Config{ReplicaSync: ReplicaSync{Mode: ReplicaSyncPeers, QueueLength: 5, MaxBatch: 7, OrphanTTL: D(time.Minute), SnapshotChains: 9}}
	want := u.ReplicaSync
	u.SetDefaults()
	if u.ReplicaSync != want {
		t.Fatalf("defaults overwrote user values: %+v, want %+v", u.ReplicaSync, want)
	}
}
