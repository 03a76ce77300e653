package controller

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infv1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
)

// Scheme knows core types and InferencePool v1.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := infv1.Install(s); err != nil {
		return nil, err
	}
	return s, nil
}

// NewManager returns a controller-runtime manager whose cache sees only
// o.Namespace, with leader election on a Lease in that namespace when
// leaderElection is set. Its own metrics and probe listeners are off: the
// picker serves its own.
func NewManager(cfg *rest.Config, o *Options, leaderElection bool) (ctrl.Manager, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	s, err := Scheme()
	if err != nil {
		return nil, fmt.Errorf("scheme: %w", err)
	}
	k := o.Kube
	return ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        s,
		Logger:                        o.Log,
		Cache:                         cache.Options{DefaultNamespaces: map[string]cache.Config{o.Namespace: {}}},
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                leaderElection,
		LeaderElectionResourceLock:    "leases",
		LeaderElectionID:              LeaseName(o),
		LeaderElectionNamespace:       o.Namespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &k.LeaseDuration.Duration,
		RenewDeadline:                 &k.RenewDeadline.Duration,
		RetryPeriod:                   &k.RetryPeriod.Duration,
	})
}

// LeaseName is the leader-election Lease: one per pool (or per selector in
// pool-less mode), so replicas of one picker deployment elect one leader.
func LeaseName(o *Options) string {
	if o.PoolName != "" {
		return "kvpick-" + o.PoolName
	}
	keys := make([]string, 0, len(o.Selector))
	for k, v := range o.Selector {
		keys = append(keys, k+"="+v)
	}
	sort.Strings(keys)
	h := fnv.New32a()
	h.Write([]byte(strings.Join(keys, ",")))
	return fmt.Sprintf("kvpick-endpoints-%08x", h.Sum32())
}

// Setup registers the endpoint (and, in pool mode with the CRD installed, the
// objective) controllers with mgr. They run on every replica, not only the
// leader, so a standby's candidate set is warm when it takes over.
func Setup(mgr ctrl.Manager, o *Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.Namespace, Name: "endpoints"}}}
	})
	b := ctrl.NewControllerManagedBy(mgr).Named("kvpick-endpoints").
		WithOptions(ctrlOptions()).
		Watches(&corev1.Pod{}, one)
	if o.PoolName != "" {
		b = b.Watches(&infv1.InferencePool{}, one, builder.WithPredicates(named(o.PoolName)))
	}
	if err := b.Complete(&endpointsReconciler{c: mgr.GetCache(), o: o}); err != nil {
		return fmt.Errorf("endpoints controller: %w", err)
	}
	return setupObjectives(mgr, o, one)
}

func setupObjectives(mgr ctrl.Manager, o *Options, one handler.EventHandler) error {
	if o.PoolName == "" || o.Objectives == nil {
		return nil
	}
	_, err := mgr.GetRESTMapper().RESTMapping(ObjectiveGVK.GroupKind(), ObjectiveGVK.Version)
	if meta.IsNoMatchError(err) {
		o.Log.Info("InferenceObjective CRD not installed: priorities come from the config file only", "kind", ObjectiveGVK.String())
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up %s: %w", ObjectiveGVK, err)
	}
	err = ctrl.NewControllerManagedBy(mgr).Named("kvpick-objectives").
		WithOptions(ctrlOptions()).
		Watches(objectiveObject(), one).
		Complete(&objectivesReconciler{c: mgr.GetCache(), o: o})
	if err != nil {
		return fmt.Errorf("objectives controller: %w", err)
	}
	return nil
}

func named(name string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetName() == name })
}

// ctrlOptions run a controller on every replica (not only the leader). Name
// validation is off because tests run several managers in one process; a
// picker process has one.
func ctrlOptions() controller.Options {
	return controller.Options{NeedLeaderElection: ptr.To(false), SkipNameValidation: ptr.To(true)}
}
