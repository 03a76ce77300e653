package controller

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// testWorkerIDAnnotation: a pod's kvpick.io/dynamo-worker-id annotation is
// its endpoint's Dynamo worker instance id (what router.workerHeaders sends
// as x-worker-instance-id), and a changed annotation reaches the endpoint.
func (k *kenv) testWorkerIDAnnotation(t *testing.T) {
	ns := "workerid"
	k.namespace(t, ns)
	p := k.pod(t, ns, "a", "10.0.2.1", map[string]string{"app": "m"}, true)
	o := options(t, ns)
	o.Selector, o.TargetPorts = map[string]string{"app": "m"}, []int{8000}
	k.start(t, k.cfg, o, false)
	k.waitKeys(t, o.Set, "10.0.2.1:8000")
	workerID := func() string {
		e, ok := o.Set.Snapshot().Get("10.0.2.1:8000")
		if !ok {
			return "<gone>"
		}
		return string(e.WorkerID)
	}
	if got := workerID(); got != "" {
		t.Fatalf("worker id %q without the annotation", got)
	}
	for _, id := range []string{"7587889", "18446744073709551615"} {
		ctx := context.Background()
		if err := k.c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			t.Fatal(err)
		}
		p.Annotations = map[string]string{o.Kube.WorkerIDAnnotation: id}
		if err := k.c.Update(ctx, p); err != nil {
			t.Fatal(err)
		}
		eventually(t, "worker id "+id+" from the annotation", func() bool { return workerID() == id })
	}
}
