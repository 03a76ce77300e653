package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/internal/kubetest"
	"github.com/kvpick/kvpick/pkg/endpoints"
)

func slice(name, svc string, port int32, portName string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: "peers", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(portName), Port: ptr.To(port)}, {Name: ptr.To("grpc"), Port: ptr.To[int32](9002)}},
		Endpoints:   eps,
	}
}

func ep(ip string, ready bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}
}

func TestPeerAddresses(t *testing.T) {
	tests := []struct {
		name  string
		items []discoveryv1.EndpointSlice
		want  []string
	}{
		{"none", nil, nil},
		{"ready only, sorted, deduplicated across slices", []discoveryv1.EndpointSlice{
			*slice("a", "kvpick", 9004, "peer", ep("10.0.0.3", true), ep("10.0.0.1", true), ep("10.0.0.2", false)),
			*slice("b", "kvpick", 9004, "peer", ep("10.0.0.1", true)),
		}, []string{"10.0.0.1:9004", "10.0.0.3:9004"}},
		{"no port of that name", []discoveryv1.EndpointSlice{*slice("a", "kvpick", 9004, "other", ep("10.0.0.1", true))}, nil},
		{"readiness unknown counts as ready", []discoveryv1.EndpointSlice{*slice("a", "kvpick", 7, "peer",
			discoveryv1.Endpoint{Addresses: []string{"fd00::1"}})}, []string{"[fd00::1]:7"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PeerAddresses(tc.items, "peer"); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// Against a real API server: the watcher follows the Service's slices as
// replicas come, turn unready and go, and ignores other Services' slices.
func TestPeersFollowEndpointSlices(t *testing.T) {
	_, cfg := kubetest.Start(t)
	s, _ := Scheme()
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "peers"}}); err != nil {
		t.Fatal(err)
	}
	o := &Options{Namespace: "peers", Selector: map[string]string{"app": "none"}, TargetPorts: []int{8000},
		Kube: v1.Default().Kubernetes, Set: endpoints.NewSet(), Log: logr.Discard()}
	mgr, err := NewManager(cfg, o, false)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	err = SetupPeers(mgr, PeerOptions{Namespace: "peers", Service: "kvpick", PortName: "peer", Log: logr.Discard(),
		OnPeers: func(a []string) { mu.Lock(); got = a; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() { cancel(); <-done })
	peersAre := func(want ...string) {
		t.Helper()
		eventually(t, fmt.Sprintf("peers %v", want), func() bool {
			mu.Lock()
			defer mu.Unlock()
			return slices.Equal(got, want)
		})
	}
	mine := slice("kvpick-1", "kvpick", 9004, "peer", ep("10.1.0.1", true), ep("10.1.0.2", true))
	for _, obj := range []client.Object{mine, slice("other-1", "other", 9004, "peer", ep("10.9.9.9", true))} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	peersAre("10.1.0.1:9004", "10.1.0.2:9004")
	mine.Endpoints = []discoveryv1.Endpoint{ep("10.1.0.1", true), ep("10.1.0.2", false), ep("10.1.0.3", true)}
	if err := c.Update(ctx, mine); err != nil {
		t.Fatal(err)
	}
	peersAre("10.1.0.1:9004", "10.1.0.3:9004")
	if err := c.Delete(ctx, mine); err != nil {
		t.Fatal(err)
	}
	peersAre()
}
