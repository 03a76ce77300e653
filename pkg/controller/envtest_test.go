package controller

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infv1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/internal/kubetest"
	"github.com/kvpick/kvpick/pkg/endpoints"
)

// kenv is one control plane shared by the envtest subtests; each uses its own namespace.
type kenv struct {
	cfg *rest.Config
	c   client.Client
}

func TestKubernetes(t *testing.T) {
	_, cfg := kubetest.Start(t)
	s, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	k := &kenv{cfg: cfg, c: c}
	t.Run("PoolFollowsPods", k.testPoolFollowsPods)
	t.Run("PoolLess", k.testPoolLess)
	t.Run("WorkerIDAnnotation", k.testWorkerIDAnnotation)
	t.Run("Objectives", k.testObjectives)
	t.Run("APIServerOutage", k.testOutage)
	t.Run("LeaderElection", k.testLeaderElection)
}

const wait = 60 * time.Second // generous: the machine may be loaded; success returns at once

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func keys(set *endpoints.Set) []string {
	var out []string
	for _, e := range set.Snapshot().List {
		out = append(out, e.Key())
	}
	return out
}

func (k *kenv) waitKeys(t *testing.T, set *endpoints.Set, want ...string) {
	t.Helper()
	slices.Sort(want)
	eventually(t, fmt.Sprintf("endpoints %v (have %v)", want, keys(set)), func() bool { return slices.Equal(keys(set), want) })
}

func (k *kenv) namespace(t *testing.T, name string) {
	t.Helper()
	if err := k.c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

func (k *kenv) pool(t *testing.T, ns, name string, sel map[string]string, ports ...int32) *infv1.InferencePool {
	t.Helper()
	p := &infv1.InferencePool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	setPool(p, sel, ports)
	p.Spec.EndpointPickerRef = &infv1.EndpointPickerRef{Name: "kvpick", Port: &infv1.Port{Number: 9002}}
	if err := k.c.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func setPool(p *infv1.InferencePool, sel map[string]string, ports []int32) {
	p.Spec.Selector.MatchLabels = map[infv1.LabelKey]infv1.LabelValue{}
	for k, v := range sel {
		p.Spec.Selector.MatchLabels[infv1.LabelKey(k)] = infv1.LabelValue(v)
	}
	p.Spec.TargetPorts = nil
	for _, n := range ports {
		p.Spec.TargetPorts = append(p.Spec.TargetPorts, infv1.Port{Number: infv1.PortNumber(n)})
	}
}

// pod creates a pod and, as a kubelet would, patches its status: Running, the IP, Ready=ready.
func (k *kenv) pod(t *testing.T, ns, name, ip string, labels map[string]string, ready bool) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "engine", Image: "modelsim"}}}}
	ctx := context.Background()
	if err := k.c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}}
	k.setReady(t, p, ready)
	return p
}

func (k *kenv) setReady(t *testing.T, p *corev1.Pod, ready bool) {
	t.Helper()
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.Now()}}
	if err := k.c.Status().Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// start runs a manager with the controllers for o until the test ends; it returns the readiness.
func (k *kenv) start(t *testing.T, cfg *rest.Config, o *Options, leader bool) (*Readiness, context.CancelFunc) {
	t.Helper()
	mgr, err := NewManager(cfg, o, leader)
	if err != nil {
		t.Fatal(err)
	}
	if err := Setup(mgr, o); err != nil {
		t.Fatal(err)
	}
	probe, err := NewAPIProbe(cfg, o.Kube.APIProbeInterval.Duration, o.Log.WithName("probe"))
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(probe); err != nil {
		t.Fatal(err)
	}
	r := NewReadiness(func(bool) {}, leader)
	o.Set.OnChange(func(s *endpoints.Snapshot) { r.SetEndpoints(len(s.List) > 0) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	go FollowLeadership(ctx, mgr.Elected(), r)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Logf("manager: %v", err)
		}
	})
	return r, cancel
}

func options(t *testing.T, ns string) *Options {
	kc := v1.Default().Kubernetes
	kc.APIProbeInterval = v1.D(100 * time.Millisecond)
	kc.LeaseDuration, kc.RenewDeadline, kc.RetryPeriod = v1.D(3*time.Second), v1.D(2*time.Second), v1.D(200*time.Millisecond)
	return &Options{Namespace: ns, Kube: kc, Set: endpoints.NewSet(), Log: stderrLog(t.Name())}
}

// stderrLog logs to stderr (shown when the package fails): unlike testr it
// may be called by manager goroutines that outlive a subtest by a moment.
func stderrLog(name string) logr.Logger {
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, name, prefix, args) }, funcr.Options{})
}

func (k *kenv) testPoolFollowsPods(t *testing.T) {
	ctx := context.Background()
	ns := "follow"
	k.namespace(t, ns)
	sel := map[string]string{"app": "m"}
	pool := k.pool(t, ns, "pool", sel, 8000)
	a := k.pod(t, ns, "a", "10.0.0.1", sel, true)
	b := k.pod(t, ns, "b", "10.0.0.2", sel, true)
	c := k.pod(t, ns, "c", "10.0.0.3", sel, false)
	k.pod(t, ns, "other", "10.0.0.9", map[string]string{"app": "x"}, true)
	o := options(t, ns)
	o.PoolName = "pool"
	k.start(t, k.cfg, o, false)
	k.waitKeys(t, o.Set, "10.0.0.1:8000", "10.0.0.2:8000")

	k.setReady(t, c, true)
	k.waitKeys(t, o.Set, "10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000")
	k.setReady(t, a, false)
	k.waitKeys(t, o.Set, "10.0.0.2:8000", "10.0.0.3:8000")
	if err := k.c.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	k.waitKeys(t, o.Set, "10.0.0.3:8000")

	// A terminating pod (deletion pending on a finalizer) leaves at once.
	c.Finalizers = []string{"kvpick.io/test"}
	if err := k.c.Update(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := k.c.Delete(ctx, c); err != nil {
		t.Fatal(err)
	}
	k.waitKeys(t, o.Set)
	if err := k.c.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
		t.Fatal(err)
	}
	c.Finalizers = nil
	if err := k.c.Update(ctx, c); err != nil {
		t.Fatal(err)
	}

	// Selector and target ports follow the pool.
	k.pod(t, ns, "d", "10.0.0.4", map[string]string{"app": "n"}, true)
	if err := k.c.Get(ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
		t.Fatal(err)
	}
	setPool(pool, map[string]string{"app": "n"}, []int32{8000, 8001})
	if err := k.c.Update(ctx, pool); err != nil {
		t.Fatal(err)
	}
	k.waitKeys(t, o.Set, "10.0.0.4:8000", "10.0.0.4:8001")
	if err := k.c.Delete(ctx, pool); err != nil {
		t.Fatal(err)
	}
	k.waitKeys(t, o.Set)
}

func (k *kenv) testPoolLess(t *testing.T) {
	ns := "poolless"
	k.namespace(t, ns)
	k.pod(t, ns, "a", "10.0.1.1", map[string]string{"app": "m", "tier": "gpu"}, true)
	k.pod(t, ns, "b", "10.0.1.2", map[string]string{"app": "m"}, true)
	o := options(t, ns)
	o.Selector, o.TargetPorts = map[string]string{"app": "m", "tier": "gpu"}, []int{9000}
	k.start(t, k.cfg, o, false)
	k.waitKeys(t, o.Set, "10.0.1.1:9000")
	k.pod(t, ns, "c", "10.0.1.3", map[string]string{"app": "m", "tier": "gpu"}, true)
	k.waitKeys(t, o.Set, "10.0.1.1:9000", "10.0.1.3:9000")
}
