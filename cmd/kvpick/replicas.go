package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/controller"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/replicasync"
	"github.com/kvpick/kvpick/pkg/replicasync/peer"
)

// peers is replica sync's network side: the listener peers push to, and
// this replica's id. nil when replicaSync.mode is off.
type peers struct {
	lis net.Listener
	id  string
}

// listenPeers binds replicaSync.listenAddr first, so the id can name the
// bound port (several replicas on one host in tests).
func listenPeers(cfg *v1.Config) (*peers, error) {
	rs := cfg.ReplicaSync
	if rs.Mode != v1.ReplicaSyncPeers {
		return nil, nil
	}
	lis, err := net.Listen("tcp", rs.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("replicaSync.listenAddr %s: %w", rs.ListenAddr, err)
	}
	id := rs.ID
	if id == "" {
		host, _ := os.Hostname()
		id = fmt.Sprintf("%s:%d", host, lis.Addr().(*net.TCPAddr).Port)
	}
	return &peers{lis: lis, id: id}, nil
}

// start serves the peer service and dials the peers (the static list, or
// the Service's EndpointSlices in Kubernetes mode) until ctx ends.
func (p *peers) start(ctx context.Context, cfg *v1.Config, core peer.Core, kc *kube, log logr.Logger) (*peer.Transport, error) {
	auth, err := peerAuth(cfg.ReplicaSync)
	if err != nil {
		p.lis.Close()
		return nil, err
	}
	if err := p.serve(ctx, cfg, core, auth, log); err != nil {
		return nil, err
	}
	tr, err := p.transport(cfg, core, auth, log)
	if err != nil {
		return nil, err
	}
	go tr.Run(ctx)
	rs := cfg.ReplicaSync
	switch {
	case kc != nil && rs.Service != "": // the Service's EndpointSlices replace any static list
		err = controller.SetupPeers(kc.mgr, controller.PeerOptions{Namespace: kc.opts.Namespace, Service: rs.Service,
			PortName: rs.PortName, OnPeers: tr.SetPeers, Log: log.WithName("peers")})
	case len(rs.Peers) == 0:
		log.Info("WARNING: replica sync is on but lists no peers: give --peers (or replicaSync.peers), or replicaSync.service in Kubernetes mode")
	default:
		tr.SetPeers(rs.Peers)
	}
	log.Info("replica sync", "id", p.id, "listen", p.lis.Addr().String(), "peers", rs.Peers, "service", rs.Service,
		"secret", len(auth.Secret) > 0, "mTLS", auth.ClientCAs != nil)
	return tr, err
}

// peerAuth reads the shared secret (file, else environment) and client CA.
func peerAuth(rs v1.ReplicaSync) (peer.Auth, error) {
	var a peer.Auth
	var err error
	switch {
	case rs.SecretFile != "":
		if a.Secret, err = peer.ReadSecret(rs.SecretFile); err != nil {
			return a, fmt.Errorf("replicaSync.secretFile: %w", err)
		}
	case strings.TrimSpace(os.Getenv(v1.PeerSecretEnv)) != "":
		a.Secret = []byte(strings.TrimSpace(os.Getenv(v1.PeerSecretEnv)))
	}
	if rs.ClientCAFile != "" {
		if a.ClientCAs, err = peer.LoadCAs(rs.ClientCAFile); err != nil {
			return a, fmt.Errorf("replicaSync.clientCAFile: %w", err)
		}
	}
	if err := a.Validate(); err != nil {
		return a, fmt.Errorf("replicaSync: %w: set secretFile, $%s or clientCAFile", err, v1.PeerSecretEnv)
	}
	return a, nil
}

func (p *peers) serve(ctx context.Context, cfg *v1.Config, core peer.Core, auth peer.Auth, log logr.Logger) error {
	rs := cfg.ReplicaSync
	srv, err := peer.NewServer(peer.ServerOptions{ID: p.id, Core: core, Auth: auth, Expiry: rs.PeerExpiry.Duration,
		Heartbeat: rs.Heartbeat.Duration, Log: log.WithName("peer-server")})
	if err != nil {
		p.lis.Close()
		return err
	}
	tlsConf, err := serverTLS(cfg.Server)
	if err != nil {
		p.lis.Close()
		return err
	}
	if auth.ClientCAs != nil && tlsConf == nil {
		p.lis.Close()
		return errors.New("replicaSync.clientCAFile: mutual TLS needs TLS on (server.plaintext is set)")
	}
	opts := peer.GRPCServerOptions(rs.Heartbeat.Duration)
	if tlsConf != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(peer.ServerTLS(tlsConf, auth.ClientCAs))))
	}
	g := grpc.NewServer(opts...)
	srv.Register(g)
	go func() { <-ctx.Done(); g.Stop() }()
	go func() {
		if err := g.Serve(p.lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			log.Error(err, "replica sync server stopped")
		}
	}()
	return nil
}

func (p *peers) transport(cfg *v1.Config, core peer.Core, auth peer.Auth, log logr.Logger) (*peer.Transport, error) {
	rs := cfg.ReplicaSync
	var tlsConf *tls.Config
	if !cfg.Server.Plaintext {
		var err error
		if tlsConf, err = peer.ClientTLS(cfg.Server.CertFile, cfg.Server.KeyFile, auth.ClientCAs); err != nil {
			return nil, err
		}
	}
	return peer.NewTransport(peer.TransportOptions{ID: p.id, Core: core, Secret: auth.Secret, TLS: tlsConf,
		QueueLen: rs.PeerQueue, MaxBatchBytes: peer.MaxBatchBytes, Heartbeat: rs.Heartbeat.Duration,
		BackoffMin: rs.ReconnectMin.Duration, BackoffMax: rs.ReconnectMax.Duration, Log: log.WithName("peer-transport")})
}

// core builds this replica's sync core (nil when sync is off).
// notify re-runs the router's admission queue when a peer's queued request
// stops waiting.
func (p *peers) core(cfg *v1.Config, set *endpoints.Set, index *kvindex.Index, active *activework.Tracker, notify func(), log logr.Logger) (*replicasync.Replica, error) {
	if p == nil {
		return nil, nil
	}
	r, err := replicasync.New(replicasync.Options{ID: p.id, Active: active, Index: index, Set: set, Log: log.WithName("replicasync"),
		Sync: cfg.ReplicaSync, PredictedTTL: cfg.KV.LongestPredictedTTL(), MaxWait: cfg.Admission.MaxQueueWait.Duration,
		OnChange: notify})
	if err != nil {
		p.lis.Close()
		return nil, err
	}
	return r, nil
}

// addr is the bound listen address (for --ready-file).
func (p *peers) addr() string { return p.lis.Addr().String() }
