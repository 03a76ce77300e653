package controller

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infv1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"

	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// endpointsReconciler recomputes the whole candidate set on every event: the
// pool's selector and ports (or the pool-less ones), the pods they select,
// the eligible pods' endpoints. It writes the set only when that changed.
type endpointsReconciler struct {
	c    client.Reader
	o    *Options
	mu   sync.Mutex
	last []endpoints.Endpoint
	seen bool
}

// Reconcile implements reconcile.Reconciler; the request is ignored (level-based).
func (r *endpointsReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	sel, ports, err := r.target(ctx)
	if err != nil {
		telemetry.KubeReconciles.WithLabelValues("endpoints", "error").Inc()
		return ctrl.Result{}, err
	}
	var eps []endpoints.Endpoint
	if sel != nil {
		if eps, err = r.endpoints(ctx, sel, ports); err != nil {
			telemetry.KubeReconciles.WithLabelValues("endpoints", "error").Inc()
			return ctrl.Result{}, err
		}
	}
	telemetry.KubeReconciles.WithLabelValues("endpoints", "ok").Inc()
	return ctrl.Result{}, r.apply(eps)
}

// target returns the selector and ports in force; a nil selector means no
// pool (deleted or not yet created) and so no endpoints.
func (r *endpointsReconciler) target(ctx context.Context) (map[string]string, []int, error) {
	if r.o.PoolName == "" {
		return r.o.Selector, r.o.TargetPorts, nil
	}
	var pool infv1.InferencePool
	err := r.c.Get(ctx, types.NamespacedName{Namespace: r.o.Namespace, Name: r.o.PoolName}, &pool)
	if apierrors.IsNotFound(err) {
		r.o.Log.Info("InferencePool not found: no endpoints until it exists", "pool", r.o.PoolName, "namespace", r.o.Namespace)
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("get InferencePool %s/%s: %w", r.o.Namespace, r.o.PoolName, err)
	}
	return poolTarget(&pool)
}

// poolTarget reads the selector and target ports of a pool. An empty
// selector selects nothing (not every pod in the namespace).
func poolTarget(p *infv1.InferencePool) (map[string]string, []int, error) {
	sel := make(map[string]string, len(p.Spec.Selector.MatchLabels))
	for k, v := range p.Spec.Selector.MatchLabels {
		sel[string(k)] = string(v)
	}
	ports := make([]int, 0, len(p.Spec.TargetPorts))
	for _, tp := range p.Spec.TargetPorts {
		ports = append(ports, int(tp.Number))
	}
	if len(sel) == 0 || len(ports) == 0 {
		return nil, nil, nil
	}
	return sel, ports, nil
}

func (r *endpointsReconciler) endpoints(ctx context.Context, sel map[string]string, ports []int) ([]endpoints.Endpoint, error) {
	var pods corev1.PodList
	if err := r.c.List(ctx, &pods, client.InNamespace(r.o.Namespace), client.MatchingLabels(sel)); err != nil {
		return nil, fmt.Errorf("list pods in %s: %w", r.o.Namespace, err)
	}
	var eps []endpoints.Endpoint
	seen := map[string]string{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if err := AnnotationErrors(p, &r.o.Kube); err != nil {
			r.o.Log.Info("ignoring pod annotation", "reason", err.Error())
		}
		for _, e := range PodEndpoints(p, ports, &r.o.Kube) {
			if other, dup := seen[e.Key()]; dup {
				r.o.Log.Info("two pods share an endpoint address; keeping the first", "endpoint", e.Key(), "kept", other, "skipped", p.Name)
				continue
			}
			seen[e.Key()] = p.Name
			eps = append(eps, e)
		}
	}
	sort.Slice(eps, func(i, j int) bool { return eps[i].Key() < eps[j].Key() })
	return eps, nil
}

// apply writes eps to the set unless it equals what was written last.
func (r *endpointsReconciler) apply(eps []endpoints.Endpoint) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen && reflect.DeepEqual(eps, r.last) {
		return nil
	}
	if err := r.o.Set.Replace(eps); err != nil {
		return fmt.Errorf("replace candidate set: %w", err)
	}
	r.last, r.seen = eps, true
	telemetry.KubeEndpoints.Set(float64(len(eps)))
	r.o.Log.Info("candidate set updated from Kubernetes", "endpoints", len(eps))
	return nil
}
