package controller

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// ObjectiveGVK is the InferenceObjective kind kvpick reads. It is read as
// unstructured: gateway-api-inference-extension v1.6.0 no longer ships its Go
// types (the CRD comes from v1.5.0, see config/crd).
var ObjectiveGVK = schema.GroupVersionKind{Group: "inference.networking.x-k8s.io", Version: "v1alpha2", Kind: "InferenceObjective"}

func objectiveList() *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(ObjectiveGVK.GroupVersion().WithKind(ObjectiveGVK.Kind + "List"))
	return l
}

func objectiveObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ObjectiveGVK)
	return u
}

// objectivesReconciler recomputes name → priority from every
// InferenceObjective in the namespace that references the pool.
type objectivesReconciler struct {
	c    client.Reader
	o    *Options
	mu   sync.Mutex
	last map[string]int
}

// Reconcile implements reconcile.Reconciler; the request is ignored (level-based).
func (r *objectivesReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	l := objectiveList()
	if err := r.c.List(ctx, l, client.InNamespace(r.o.Namespace)); err != nil {
		telemetry.KubeReconciles.WithLabelValues("objectives", "error").Inc()
		return ctrl.Result{}, fmt.Errorf("list InferenceObjectives in %s: %w", r.o.Namespace, err)
	}
	next := maps.Clone(r.o.BaseObjectives)
	if next == nil {
		next = map[string]int{}
	}
	for i := range l.Items {
		if name, prio, ok := objectivePriority(&l.Items[i], r.o.PoolName); ok {
			next[name] = prio
		}
	}
	telemetry.KubeReconciles.WithLabelValues("objectives", "ok").Inc()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last != nil && reflect.DeepEqual(next, r.last) {
		return ctrl.Result{}, nil
	}
	r.last = next
	r.o.Objectives(maps.Clone(next))
	r.o.Log.Info("objective priorities updated from Kubernetes", "objectives", len(next))
	return ctrl.Result{}, nil
}

// objectivePriority returns the objective's name and priority (unset is 0)
// when it references pool (poolRef.group, when set, must be PoolGroup).
func objectivePriority(u *unstructured.Unstructured, pool string) (string, int, bool) {
	ref, _, _ := unstructured.NestedString(u.Object, "spec", "poolRef", "name")
	group, _, _ := unstructured.NestedString(u.Object, "spec", "poolRef", "group")
	if ref != pool || (group != "" && group != PoolGroup) {
		return "", 0, false
	}
	prio, _, err := unstructured.NestedInt64(u.Object, "spec", "priority")
	if err != nil {
		return "", 0, false
	}
	return u.GetName(), int(prio), true
}
