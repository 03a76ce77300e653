package controller

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// APIProbe checks the API server's reachability every interval and reports it
// (kvpick_kube_api_reachable, one log line per change). It changes nothing
// else: while the API server is away the informer cache, and so the candidate
// set, stays as last seen, and readiness is untouched. It runs on every
// replica, leader or not.
type APIProbe struct {
	client   rest.Interface
	interval time.Duration
	log      logr.Logger
	up       *bool
}

// NewAPIProbe returns a probe of the API server cfg points at.
func NewAPIProbe(cfg *rest.Config, interval time.Duration, log logr.Logger) (*APIProbe, error) {
	c := rest.CopyConfig(cfg)
	c.Timeout = max(interval/2, time.Second)
	d, err := discovery.NewDiscoveryClientForConfig(c)
	if err != nil {
		return nil, err
	}
	return &APIProbe{client: d.RESTClient(), interval: interval, log: log}, nil
}

// NeedLeaderElection is false: every replica reports its own view.
func (p *APIProbe) NeedLeaderElection() bool { return false }

// Start probes until ctx ends.
func (p *APIProbe) Start(ctx context.Context) error {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		p.check(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (p *APIProbe) check(ctx context.Context) {
	_, err := p.client.Get().AbsPath("/version").DoRaw(ctx)
	if ctx.Err() != nil {
		return
	}
	up := err == nil
	if p.up != nil && *p.up == up {
		return
	}
	p.up = &up
	if up {
		telemetry.KubeAPIReachable.Set(1)
		p.log.Info("Kubernetes API server reachable")
		return
	}
	telemetry.KubeAPIReachable.Set(0)
	p.log.Error(err, "Kubernetes API server unreachable: serving the last known endpoints until it returns")
}
