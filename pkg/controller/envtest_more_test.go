package controller

import (
	"context"
	"maps"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kvpick/kvpick/internal/kubetest"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

func (k *kenv) objective(t *testing.T, ns, name, pool string, prio int64) *unstructured.Unstructured {
	t.Helper()
	u := objectiveObject()
	u.SetNamespace(ns)
	u.SetName(name)
	u.Object["spec"] = map[string]any{"priority": prio, "poolRef": map[string]any{"name": pool}}
	if err := k.c.Create(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u
}

func (k *kenv) testObjectives(t *testing.T) {
	ctx := context.Background()
	ns := "objectives"
	k.namespace(t, ns)
	k.pool(t, ns, "pool", map[string]string{"app": "m"}, 8000)
	chat := k.objective(t, ns, "chat", "pool", 5)
	k.objective(t, ns, "elsewhere", "other-pool", 7)
	var mu sync.Mutex
	var got map[string]int
	o := options(t, ns)
	o.PoolName = "pool"
	o.BaseObjectives = map[string]int{"batch": -1, "chat": 1}
	o.Objectives = func(m map[string]int) { mu.Lock(); got = m; mu.Unlock() }
	k.start(t, k.cfg, o, false)
	expect := func(want map[string]int) {
		t.Helper()
		eventually(t, "objectives", func() bool { mu.Lock(); defer mu.Unlock(); return maps.Equal(got, want) })
	}
	expect(map[string]int{"batch": -1, "chat": 5}) // the cluster's chat overrides the file's
	if err := k.c.Get(ctx, client.ObjectKeyFromObject(chat), chat); err != nil {
		t.Fatal(err)
	}
	chat.Object["spec"].(map[string]any)["priority"] = int64(9)
	if err := k.c.Update(ctx, chat); err != nil {
		t.Fatal(err)
	}
	expect(map[string]int{"batch": -1, "chat": 9})
	k.objective(t, ns, "bulk", "pool", -3)
	expect(map[string]int{"batch": -1, "chat": 9, "bulk": -3})
	if err := k.c.Delete(ctx, chat); err != nil {
		t.Fatal(err)
	}
	expect(map[string]int{"batch": -1, "chat": 1, "bulk": -3})
}

// testOutage puts a cuttable proxy between the controller and the API server:
// while it is cut the set keeps its last endpoints (even though a pod is
// deleted meanwhile) and the reachability gauge says so; once restored the set
// converges.
func (k *kenv) testOutage(t *testing.T) {
	ctx := context.Background()
	ns := "outage"
	k.namespace(t, ns)
	sel := map[string]string{"app": "m"}
	k.pool(t, ns, "pool", sel, 8000)
	k.pod(t, ns, "a", "10.0.2.1", sel, true)
	b := k.pod(t, ns, "b", "10.0.2.2", sel, true)
	u, err := url.Parse(k.cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := kubetest.NewProxy(t, u.Host)
	viaProxy := rest.CopyConfig(k.cfg)
	viaProxy.Host = "https://" + proxy.Addr()
	o := options(t, ns)
	o.PoolName = "pool"
	k.start(t, viaProxy, o, false)
	k.waitKeys(t, o.Set, "10.0.2.1:8000", "10.0.2.2:8000")
	eventually(t, "api reachable", func() bool { return testutil.ToFloat64(telemetry.KubeAPIReachable) == 1 })

	proxy.Cut()
	eventually(t, "api unreachable", func() bool { return testutil.ToFloat64(telemetry.KubeAPIReachable) == 0 })
	if err := k.c.Delete(ctx, b); err != nil { // the picker cannot see this
		t.Fatal(err)
	}
	time.Sleep(time.Second) // ten probe intervals: the set must not be emptied or changed meanwhile
	if got := keys(o.Set); !slices.Equal(got, []string{"10.0.2.1:8000", "10.0.2.2:8000"}) {
		t.Fatalf("during the outage the set changed to %v", got)
	}

	if err := proxy.Restore(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "api reachable again", func() bool { return testutil.ToFloat64(telemetry.KubeAPIReachable) == 1 })
	k.waitKeys(t, o.Set, "10.0.2.1:8000")
}

// testLeaderElection runs two replicas on one pool: both keep the candidate
// set, only the leader is ready; when the leader stops the other takes over.
func (k *kenv) testLeaderElection(t *testing.T) {
	ns := "leader"
	k.namespace(t, ns)
	sel := map[string]string{"app": "m"}
	k.pool(t, ns, "pool", sel, 8000)
	k.pod(t, ns, "a", "10.0.3.1", sel, true)
	oa, ob := options(t, ns), options(t, ns)
	oa.PoolName, ob.PoolName = "pool", "pool"
	ra, stopA := k.start(t, k.cfg, oa, true)
	k.waitKeys(t, oa.Set, "10.0.3.1:8000")
	eventually(t, "replica A leads", func() bool { return ra.Ready() })
	rb, _ := k.start(t, k.cfg, ob, true)
	k.waitKeys(t, ob.Set, "10.0.3.1:8000") // the standby's set is warm
	if rb.Ready() {
		t.Fatal("standby is ready while A leads")
	}
	stopA()
	eventually(t, "replica B takes over", func() bool { return rb.Ready() })
}
