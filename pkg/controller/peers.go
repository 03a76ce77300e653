package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/go-logr/logr"
	discoveryv1 "k8s.io/api/discovery/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// PeerOptions say where the picker's own replicas are listed: the
// EndpointSlices of its Service, in the manager's namespace.
type PeerOptions struct {
	Namespace string
	// Service is the picker's own Service.
	Service string
	// PortName is the EndpointSlice port carrying replica sync traffic.
	PortName string
	// OnPeers receives the ready peer addresses (host:port, sorted) on every change.
	OnPeers func([]string)
	Log     logr.Logger
}

// SetupPeers registers a controller that follows the Service's
// EndpointSlices and reports its ready addresses. It runs on every replica.
func SetupPeers(mgr ctrl.Manager, o PeerOptions) error {
	if o.Namespace == "" || o.Service == "" || o.PortName == "" || o.OnPeers == nil {
		return errors.New("peers: namespace, service, port name and a receiver are required")
	}
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.Namespace, Name: o.Service}}}
	})
	ofService := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return obj.GetLabels()[discoveryv1.LabelServiceName] == o.Service
	})
	err := ctrl.NewControllerManagedBy(mgr).Named("kvpick-peers").WithOptions(ctrlOptions()).
		Watches(&discoveryv1.EndpointSlice{}, one, builder.WithPredicates(ofService)).
		Complete(&peersReconciler{c: mgr.GetCache(), o: o})
	if err != nil {
		return fmt.Errorf("peers controller: %w", err)
	}
	return nil
}

type peersReconciler struct {
	c    client.Reader
	o    PeerOptions
	last []string
}

// Reconcile lists the Service's slices and reports the addresses when they changed.
func (r *peersReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var list discoveryv1.EndpointSliceList
	err := r.c.List(ctx, &list, client.InNamespace(r.o.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: r.o.Service})
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("list endpointslices of %s/%s: %w", r.o.Namespace, r.o.Service, err)
	}
	addrs := PeerAddresses(list.Items, r.o.PortName)
	if !slices.Equal(addrs, r.last) {
		r.last = addrs
		r.o.Log.Info("replica sync peers", "service", r.o.Service, "peers", addrs)
		r.o.OnPeers(slices.Clone(addrs))
	}
	return reconcile.Result{}, nil
}

// PeerAddresses returns host:port of every ready endpoint in slices that
// has a port named portName, sorted and without duplicates. Not-ready
// endpoints (terminating, failing readiness) are left out: their streams
// would only be refused or lost.
func PeerAddresses(items []discoveryv1.EndpointSlice, portName string) []string {
	var out []string
	for _, s := range items {
		port := slicePort(s, portName)
		if port == 0 {
			continue
		}
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				out = append(out, net.JoinHostPort(a, strconv.Itoa(int(port))))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func slicePort(s discoveryv1.EndpointSlice, name string) int32 {
	for _, p := range s.Ports {
		if p.Name != nil && *p.Name == name && p.Port != nil {
			return *p.Port
		}
	}
	return 0
}
