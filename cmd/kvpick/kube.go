package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/controller"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/extproc"
	"github.com/kvpick/kvpick/pkg/router"
)

// kube is Kubernetes mode's wiring: the manager running the pool controller,
// leader election and the API probe, and the metrics auth filter.
type kube struct {
	rest   *rest.Config
	mgr    ctrl.Manager
	opts   *controller.Options
	leader bool
	auth   bool
	log    logr.Logger
}

// newKube builds Kubernetes mode from the flags; nil in standalone mode.
func newKube(cfg *v1.Config, r *refFlags, set *endpoints.Set, log logr.Logger) (*kube, error) {
	if r == nil || !r.kubeMode() {
		return nil, nil
	}
	o := &controller.Options{Namespace: r.namespace(), PoolName: r.poolName, PoolGroup: r.poolGroup,
		Kube: cfg.Kubernetes, Set: set, BaseObjectives: cfg.Objectives, Log: log.WithName("controller")}
	if r.endpointSelector != "" {
		sel, err := controller.ParseSelector(r.endpointSelector)
		if err != nil {
			return nil, err
		}
		if o.TargetPorts, err = controller.ParsePorts(r.targetPorts.String()); err != nil {
			return nil, err
		}
		o.Selector = sel
	}
	rc, err := restConfig(r.kubeconfig)
	if err != nil {
		return nil, err
	}
	mgr, err := controller.NewManager(rc, o, r.leaderElection)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	return &kube{rest: rc, mgr: mgr, opts: o, leader: r.leaderElection, auth: r.metricsAuth, log: log}, nil
}

func restConfig(path string) (*rest.Config, error) {
	if path == "" {
		c, err := ctrl.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes client config: %w", err)
		}
		return c, nil
	}
	c, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", path, err)
	}
	return c, nil
}

// leaderElection reports whether readiness waits for the lease.
func (k *kube) leaderElection() bool { return k != nil && k.leader }

// start registers the controllers (objectives feed the router) and runs the
// manager. Losing the lease or a manager failure ends the process, as the
// reference picker does: a restart comes back as a standby.
func (k *kube) start(ctx context.Context, rt *router.Router, ready *controller.Readiness) error {
	k.opts.Objectives = rt.SetObjectives
	if err := controller.Setup(k.mgr, k.opts); err != nil {
		return err
	}
	probe, err := controller.NewAPIProbe(k.rest, k.opts.Kube.APIProbeInterval.Duration, k.log.WithName("kube-api"))
	if err != nil {
		return err
	}
	if err := k.mgr.Add(probe); err != nil {
		return err
	}
	go controller.FollowLeadership(ctx, k.mgr.Elected(), ready)
	go func() {
		if err := k.mgr.Start(ctx); err != nil {
			k.log.Error(err, "Kubernetes controller stopped; exiting")
			os.Exit(1)
		}
	}()
	k.log.Info("Kubernetes mode", "namespace", k.opts.Namespace, "pool", k.opts.PoolName,
		"selector", k.opts.Selector, "targetPorts", k.opts.TargetPorts, "leaderElection", k.leader, "metricsAuth", k.auth)
	return nil
}

// metricsFilter wraps /metrics with TokenReview + SubjectAccessReview
// (controller-runtime's filter) when metrics auth is on; nil otherwise.
func (k *kube) metricsFilter() (func(http.Handler) (http.Handler, error), error) {
	if k == nil || !k.auth {
		return nil, nil
	}
	hc, err := rest.HTTPClientFor(k.rest)
	if err != nil {
		return nil, fmt.Errorf("metrics auth: %w", err)
	}
	f, err := filters.WithAuthenticationAndAuthorization(k.rest, hc)
	if err != nil {
		return nil, fmt.Errorf("metrics auth: %w", err)
	}
	return func(h http.Handler) (http.Handler, error) { return f(k.log.WithName("metrics-auth"), h) }, nil
}

// startHealth serves the gRPC health service alone on port (0: none).
func startHealth(ctx context.Context, port int, srv *extproc.Server, log logr.Logger) error {
	if port == 0 {
		return nil
	}
	lis, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		return fmt.Errorf("grpc health port: %w", err)
	}
	g := grpc.NewServer()
	srv.RegisterHealth(g)
	go func() {
		<-ctx.Done()
		g.Stop()
	}()
	go func() {
		if err := g.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			log.Error(err, "grpc health server stopped")
		}
	}()
	log.Info("serving gRPC health", "addr", lis.Addr().String())
	return nil
}
