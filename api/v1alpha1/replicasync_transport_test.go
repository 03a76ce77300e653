package v1alpha1

import (
	"flag"
	"strings"
	"testing"
)

func TestReplicaSyncTransportValidation(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"defaults", "", nil},
		{"peers and service", "replicaSync:\n  mode: peers\n  peers: [\"10.0.0.2:9004\", \"b:9004\"]\n  service: kvpick\n  secretFile: s\n", nil},
		{"bad addresses", "replicaSync:\n  listenAddr: nine\n  peers: [\"10.0.0.2\"]\n", []string{"replicaSync.listenAddr", "replicaSync.peers", "entry 0"}},
		{"timings", "replicaSync:\n  peerExpiry: 1s\n  heartbeat: 1s\n  reconnectMin: 2s\n  reconnectMax: 1s\n  peerQueue: -1\n",
			[]string{"replicaSync.peerExpiry: must be at least twice heartbeat", "replicaSync.reconnectMax", "replicaSync.peerQueue"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			c.SetDefaults()
			err = c.Validate()
			if len(tc.want) == 0 && err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v does not say %q", err, w)
				}
			}
		})
	}
}

func TestRouterReplicaSyncFlag(t *testing.T) {
	tests := []struct {
		args []string
		file string
		want string
		err  string
	}{
		{[]string{"--router-replica-sync"}, "", ReplicaSyncPeers, ""},
		{[]string{"--router-replica-sync=false"}, "", ReplicaSyncOff, ""},
		{[]string{"--no-router-replica-sync"}, "", ReplicaSyncOff, ""},
		{[]string{"--router-replica-sync"}, ReplicaSyncOff, "", "disagrees with config field replicaSync.mode=off"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " ")+" file="+tc.file, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			b := BindFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			c := &Config{ReplicaSync: ReplicaSync{Mode: tc.file}}
			err := b.Apply(c)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || c.ReplicaSync.Mode != tc.want || len(b.Warnings()) > 0 {
				t.Fatalf("mode %q err %v warnings %v, want %q", c.ReplicaSync.Mode, err, b.Warnings(), tc.want)
			}
		})
	}
}
