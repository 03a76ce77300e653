package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/controller"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/extproc"
	"github.com/kvpick/kvpick/pkg/gctune"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/kvfeed"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/router"
	"github.com/kvpick/kvpick/pkg/scrape"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

func printConfig(cfg *v1.Config) error {
	out, err := v1.Marshal(cfg) // keeps the sample's field order
	if err == nil {
		_, err = os.Stdout.Write(out)
	}
	return err
}

// run wires the picker and serves until ctx ends.
func run(ctx context.Context, cfg *v1.Config, o options, log logr.Logger) error {
	gc := gctune.Apply(cfg.Server.GCPercent, cfg.Server.MemoryLimitBytes, gctune.CgroupRoot)
	log.Info("garbage collector", "gcPercent", gc.GCPercent, "gogcFromEnv", gc.GCFromEnv,
		"memoryLimitBytes", gc.MemoryLimitBytes, "memoryLimitFrom", gc.LimitSource)
	set := endpoints.NewSet()
	pe, err := listenPeers(cfg)
	if err != nil {
		return err
	}
	kc, err := newKube(cfg, o.ref, set, log)
	if err != nil {
		return err
	}
	var src *endpoints.FileSource
	if kc == nil { // standalone: the endpoints file feeds the same set the controller would
		src = endpoints.NewFileSource(cfg.Endpoints.File, set)
		if err := src.Load(); err != nil {
			return err
		}
	}
	index := kvindex.New(kvindex.OptionsFor(&cfg.KV))
	kvindex.RegisterMetrics(o.pool, index.Stats)
	telemetry.RegisterPool(o.pool, set.PodLoads) // the reference picker's inference_pool_* gauges
	var rt *router.Router
	notify := func() {
		if rt != nil {
			rt.Notify()
		}
	}
	active := activework.New(cfg.KV.ActiveWorkTTL.Duration, notify)
	var feed *kvfeed.Feed
	if cfg.KV.Observation != v1.ObservePredicted {
		feed = kvfeed.New(kvfeed.Options{Set: set, Index: index, Log: log.WithName("kvfeed"), Pool: o.pool,
			Auto: cfg.KV.Observation == v1.ObserveAuto, SilenceAfter: cfg.KV.EventsSilenceAfter.Duration,
			UnmatchedAfter: cfg.KV.UnmatchedAlarmAfter, ProbeSettle: cfg.KV.UnmatchedProbeSettle.Duration})
	}
	core, err := pe.core(cfg, set, index, active, notify, log)
	if err != nil {
		return err
	}
	deps := router.Deps{Set: set, Index: index, Active: active, Log: log.WithName("router"), Pool: o.pool, Events: feed}
	if core != nil {
		deps.Sync = core
	}
	rt, err = router.New(cfg, deps)
	if err != nil {
		return err
	}
	defer rt.Close()
	srv := extproc.NewServer(rt, extproc.Options{MaxBodyBytes: cfg.Server.MaxBodyBytes, Mode: cfg.Router.Mode, Log: log.WithName("extproc")})

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go rt.Run(ctx)
	startScraper(ctx, cfg, set, index, notify, log)
	if feed != nil {
		startEvents(ctx, cfg, set, feed, log)
	}
	ready := controller.NewReadiness(srv.SetReady, kc.leaderElection())
	set.OnChange(func(s *endpoints.Snapshot) { ready.SetEndpoints(len(s.List) > 0) })
	ready.SetEndpoints(len(set.Snapshot().List) > 0)
	// Feed only once every listener is registered, so no change is missed.
	if core != nil { // before the manager starts: the EndpointSlice watcher registers with it
		tr, err := pe.start(ctx, cfg, core, kc, log)
		if err != nil {
			return err
		}
		go core.Run(ctx, tr)
	}
	if kc != nil {
		if err := kc.start(ctx, rt, ready); err != nil {
			return err
		}
	} else {
		go src.Watch(ctx, cfg.Endpoints.ReloadInterval.Duration, log.WithName("endpoints"))
	}
	if err := startHealth(ctx, o.ref.healthPort(), srv, log); err != nil {
		return err
	}
	filter, err := kc.metricsFilter()
	if err != nil {
		return err
	}
	addrs := map[string]string{}
	if pe != nil {
		addrs["peer"] = pe.addr()
	}
	return serve(ctx, cfg, o, srv, filter, addrs, log)
}

// serve binds the metrics and gRPC listeners, reports their addresses (log
// lines, and --ready-file), then serves until ctx ends.
func serve(ctx context.Context, cfg *v1.Config, o options, srv *extproc.Server, filter func(http.Handler) (http.Handler, error),
	ready map[string]string, log logr.Logger) error {
	if cfg.Server.MetricsAddr != v1.MetricsOff {
		if lis, err := net.Listen("tcp", cfg.Server.MetricsAddr); err != nil {
			log.Error(err, "metrics listener", "addr", cfg.Server.MetricsAddr) // serve ext_proc regardless
		} else {
			ready["metrics"] = lis.Addr().String()
			go serveMetrics(ctx, lis, srv, filter, o.ref.enablePprof, log)
		}
	}
	lis, err := net.Listen("tcp", cfg.Server.GRPCAddr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Server.GRPCAddr, err)
	}
	ready["grpc"] = lis.Addr().String()
	if err := writeReady(o.readyFile, ready); err != nil {
		lis.Close()
		return err
	}
	return serveGRPC(ctx, cfg, srv, lis, log)
}

// writeReady writes the bound addresses to path (when set) atomically, so a
// reader never sees half a file.
func writeReady(path string, addrs map[string]string) error {
	if path == "" {
		return nil
	}
	data, _ := json.Marshal(addrs)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("ready file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("ready file: %w", err)
	}
	return nil
}

// serverTLS is the gRPC listeners' TLS (ext_proc and replica sync): nil
// when plaintext, the certificate files when set, else self-signed.
func serverTLS(s v1.Server) (*tls.Config, error) {
	var tlsConf *tls.Config
	var err error
	switch {
	case s.Plaintext:
	case s.CertFile != "":
		tlsConf, err = extproc.LoadTLS(s.CertFile, s.KeyFile)
	default:
		tlsConf, err = extproc.SelfSignedTLS()
	}
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	return tlsConf, nil
}

func serveGRPC(ctx context.Context, cfg *v1.Config, srv *extproc.Server, lis net.Listener, log logr.Logger) error {
	tlsConf, err := serverTLS(cfg.Server)
	if err != nil {
		lis.Close()
		return err
	}
	log.Info("kvpick serving ext_proc", "addr", lis.Addr().String(), "tls", tlsConf != nil, "mode", cfg.Router.Mode)
	return extproc.ServeGRPC(ctx, lis, srv, tlsConf, cfg.Server.ShutdownGrace.Duration)
}

func serveMetrics(ctx context.Context, lis net.Listener, srv *extproc.Server, filter func(http.Handler) (http.Handler, error),
	profiles bool, log logr.Logger) {
	mux := http.NewServeMux()
	guarded := http.NewServeMux() // what the metrics auth guards in Kubernetes mode
	guarded.Handle("/metrics", promhttp.HandlerFor(telemetry.Registry, promhttp.HandlerOpts{}))
	if profiles {
		guarded.HandleFunc("/debug/pprof/", pprof.Index) // the named profiles: heap, goroutine, allocs, ...
		guarded.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		guarded.HandleFunc("/debug/pprof/profile", pprof.Profile)
		guarded.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		guarded.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	var h http.Handler = guarded
	if filter != nil { // Kubernetes authn/authz (TokenReview + SubjectAccessReview)
		var err error
		if h, err = filter(h); err != nil {
			log.Error(err, "metrics auth filter")
			lis.Close()
			return
		}
	}
	mux.Handle("/metrics", h)
	mux.Handle("/debug/pprof/", h)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !srv.Ready() {
			http.Error(w, "not ready: no endpoints\n", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	log.Info("serving metrics", "addr", lis.Addr().String())
	if err := hs.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error(err, "metrics server stopped")
	}
}

// startScraper polls every endpoint's metrics into the set (and the index's
// capacity bounds), re-targeting as the set changes.
func startScraper(ctx context.Context, cfg *v1.Config, set *endpoints.Set, index *kvindex.Index, notify func(), log logr.Logger) {
	if cfg.Scrape.Disabled {
		return
	}
	sink := &scrape.StateSink{Set: set, Index: index, Stride: cfg.KV.IndexStride(), Notify: notify}
	sc := scrape.New(scrape.Options{Interval: cfg.Scrape.Interval.Duration, Timeout: cfg.Scrape.Timeout.Duration,
		StaleAfter: cfg.Scrape.StaleAfter.Duration, ExcludeAfter: cfg.Scrape.ExcludeAfter}, sink, log.WithName("scrape"))
	retarget := func(s *endpoints.Snapshot) { sc.SetTargets(scrape.Targets(s, cfg.Scrape.PathFor)) }
	set.OnChange(retarget)
	retarget(set.Snapshot())
	go sc.Run(ctx)
}

// startEvents subscribes to every endpoint's KV event publisher.
func startEvents(ctx context.Context, cfg *v1.Config, set *endpoints.Set, feed *kvfeed.Feed, log logr.Logger) {
	m := kvevents.NewManager(feed, log.WithName("kvevents"))
	sync := func(s *endpoints.Snapshot) {
		subs := make([]kvevents.SubscriberOptions, 0, len(s.List))
		for _, e := range s.List {
			ep := e.KVEvents
			if ep == "" { // vLLM and SGLang offset each data-parallel rank's publisher by its rank
				ep = "tcp://" + net.JoinHostPort(e.Address, strconv.Itoa(cfg.KV.EventsPort+deref(e.DPRank)))
			}
			subs = append(subs, kvevents.SubscriberOptions{Endpoint: ep, ReplayEndpoint: e.KVEventsReplay, EndpointKey: e.Key()})
		}
		m.Sync(ctx, subs)
	}
	set.OnChange(sync)
	sync(set.Snapshot())
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
