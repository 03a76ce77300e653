package chart

import (
	"slices"
	"testing"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

// Replica sync: every replica active (no leader election), the peer port on
// the pod and the Service, EndpointSlice RBAC, a generated shared secret in
// the environment, and a picker config that finds peers through the Service
// while keeping the user's own fields.
func TestRenderReplicaSync(t *testing.T) {
	m := index(t, render(t, "replicasync.yaml"))
	a := args(t, m)
	if !slices.Contains(a, "--router-replica-sync") || slices.Contains(a, "--ha-enable-leader-election") {
		t.Errorf("args %v: want --router-replica-sync and no leader election", a)
	}
	c := container(t, m)
	if got := str(m.get(t, "Deployment/"+release+"-epp"), "spec", "template", "spec", "containers"); !contains(got,
		`{"containerPort":9400,"name":"peer"}`, `"name":"KVPICK_PEER_SECRET"`, `"secretKeyRef":{"key":"secret","name":"`+release+`-epp-peer-secret"}`) {
		t.Errorf("container %v lacks the peer port or the secret", c)
	}
	if got := str(m.get(t, "Service/"+release+"-epp"), "spec", "ports"); !contains(got, `"name":"peer","port":9400`) {
		t.Errorf("service ports %s lack peer", got)
	}
	if r := roleRules(t, m); !contains(r, `"endpointslices"`) || contains(r, `"leases"`) {
		t.Errorf("role rules %s: want endpointslices, no leases", r)
	}
	if s := str(m.get(t, "Secret/"+release+"-epp-peer-secret"), "data", "secret"); len(s) < 40 {
		t.Errorf("generated peer secret %q too short", s)
	}
	cfg, err := v1.Parse([]byte(str(m.get(t, "ConfigMap/"+release+"-epp"), "data", "kvpick.yaml")))
	if err != nil {
		t.Fatalf("the chart's picker config is not kvpick's format: %v", err)
	}
	rs := cfg.ReplicaSync
	if rs.Mode != v1.ReplicaSyncPeers || rs.Service != release+"-epp" || rs.PortName != "peer" || rs.ListenAddr != ":9400" ||
		rs.PeerExpiry.Duration != 5*time.Second || cfg.Router.Mode != "kv" {
		t.Errorf("picker config %+v (router mode %q)", rs, cfg.Router.Mode)
	}
}
