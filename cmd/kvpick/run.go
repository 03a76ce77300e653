package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/yaml"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/controller"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/extproc"
	"github.com/kvpick/kvpick/pkg/gctune"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/router"
	"github.com/kvpick/kvpick/pkg/scrape"
	"github.com/kvpick/kvpick/pkg/telemetry"
	"github.com/kvpick/kvpick/pkg/tokenize"
)

func printConfig(cfg *v1.Config) {
	out, _ := yaml.Marshal(cfg)
	os.Stdout.Write(out)
}

// run wires the picker and serves until ctx ends.
func run(ctx context.Context, cfg *v1.Config, o options, log logr.Logger) error {
	gc := gctune.Apply(cfg.Server.GCPercent, cfg.Server.MemoryLimitBytes, gctune.CgroupRoot)
	log.Info("garbage collector", "gcPercent", gc.GCPercent, "gogcFromEnv", gc.GCFromEnv,
		"memoryLimitBytes", gc.MemoryLimitBytes, "memoryLimitFrom", gc.LimitSource)
	set := endpoints.NewSet()
	kc, err := newKube(cfg, o.ref, set, log)
	if err != nil {
		return err
	}
	var src *endpoints.FileSource
	if kc == nil {
		src = endpoints.NewFileSource(cfg.Endpoints.File, set)
		if err := src.Load(); err != nil {
			return err
		}
	}
	index := kvindex.New(kvindex.Options{MaxBlocksPerEndpoint: cfg.KV.MaxBlocksPerEndpoint, PredictedTTL: cfg.KV.PredictedTTL.Duration})
	telemetry.RegisterKVIndex(o.pool, index.Stats)
	var rt *router.Router
	notify := func() {
		if rt != nil {
			rt.Notify()
		}
	}
	active := activework.New(cfg.KV.ActiveWorkTTL.Duration, notify)
	rt, err = router.New(cfg, router.Deps{Set: set, Index: index, Active: active, Tokenizer: tokenizer(cfg, set),
		Log: log.WithName("router"), Pool: o.pool})
	if err != nil {
		return err
	}
	defer rt.Close()
	srv := extproc.NewServer(rt, extproc.Options{MaxBodyBytes: cfg.Server.MaxBodyBytes, Mode: cfg.Router.Mode, Log: log.WithName("extproc")})

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go rt.Run(ctx)
	startScraper(ctx, cfg, set, index, notify, log)
	if cfg.KV.Observation == v1.ObserveEvents {
		startEvents(ctx, cfg, set, rt, log)
	}
	ready := controller.NewReadiness(srv.SetReady, kc.leaderElection())
	set.OnChange(func(s *endpoints.Snapshot) { ready.SetEndpoints(len(s.List) > 0) })
	ready.SetEndpoints(len(set.Snapshot().List) > 0)
	// Feed only once every listener is registered, so no change is missed.
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
	if cfg.Server.MetricsAddr != v1.MetricsOff {
		filter, err := kc.metricsFilter()
		if err != nil {
			return err
		}
		go serveMetrics(ctx, cfg.Server.MetricsAddr, srv, filter, log)
	}
	return serveGRPC(ctx, cfg, srv, log)
}

func tokenizer(cfg *v1.Config, set *endpoints.Set) tokenize.Tokenizer {
	if t, ok := tokenize.Local(cfg.KV.Tokenizer); ok {
		return t
	}
	return &poolTokenizer{set: set, client: &http.Client{Timeout: 2 * time.Second}} // validated: "remote"
}

// poolTokenizer asks an endpoint serving the model for exact tokens
// (vLLM's /tokenize), falling back to the approximation when none answers:
// unmatched hashes then only cost cache credit, never correctness.
type poolTokenizer struct {
	set    *endpoints.Set
	client *http.Client
}

func (p *poolTokenizer) Name() string { return "remote" }
func (p *poolTokenizer) Exact() bool  { return true }
func (p *poolTokenizer) Tokenize(ctx context.Context, model, text string, dst []uint32) ([]uint32, error) {
	for _, e := range p.set.Snapshot().List {
		if !e.Serves(model, "") || e.Load().Excluded {
			continue
		}
		if out, err := tokenize.NewRemote("http://"+e.Key(), p.client).Tokenize(ctx, model, text, dst); err == nil {
			return out, nil
		}
	}
	return tokenize.Approx(dst, text), nil
}

func serveGRPC(ctx context.Context, cfg *v1.Config, srv *extproc.Server, log logr.Logger) error {
	var tlsConf *tls.Config
	var err error
	switch {
	case cfg.Server.Plaintext:
	case cfg.Server.CertFile != "":
		tlsConf, err = extproc.LoadTLS(cfg.Server.CertFile, cfg.Server.KeyFile)
	default:
		tlsConf, err = extproc.SelfSignedTLS()
	}
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	lis, err := net.Listen("tcp", cfg.Server.GRPCAddr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Server.GRPCAddr, err)
	}
	log.Info("kvpick serving ext_proc", "addr", lis.Addr().String(), "tls", tlsConf != nil, "mode", cfg.Router.Mode)
	return extproc.ServeGRPC(ctx, lis, srv, tlsConf, cfg.Server.ShutdownGrace.Duration)
}

func serveMetrics(ctx context.Context, addr string, srv *extproc.Server, filter func(http.Handler) (http.Handler, error), log logr.Logger) {
	mux := http.NewServeMux()
	var metrics http.Handler = promhttp.HandlerFor(telemetry.Registry, promhttp.HandlerOpts{})
	if filter != nil {
		var err error
		if metrics, err = filter(metrics); err != nil {
			log.Error(err, "metrics auth filter")
			return
		}
	}
	mux.Handle("/metrics", metrics)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !srv.Ready() {
			http.Error(w, "not ready: no endpoints (or not the leader)\n", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		log.Error(err, "metrics listener", "addr", addr)
		return
	}
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
	sink := scrapeSink{set: set, index: index, notify: notify}
	sc := scrape.New(scrape.Options{Interval: cfg.Scrape.Interval.Duration, Timeout: cfg.Scrape.Timeout.Duration,
		StaleAfter: cfg.Scrape.StaleAfter.Duration, ExcludeAfter: cfg.Scrape.ExcludeAfter}, sink, log.WithName("scrape"))
	retarget := func(s *endpoints.Snapshot) {
		ts := make([]scrape.Target, 0, len(s.List))
		for _, e := range s.List {
			url := "http://" + net.JoinHostPort(e.Address, strconv.Itoa(e.MetricsPort)) + cfg.Scrape.Path
			ts = append(ts, scrape.Target{Key: e.Key(), URL: url, Engine: scrape.Engine(e.Engine)})
		}
		sc.SetTargets(ts)
	}
	set.OnChange(retarget)
	retarget(set.Snapshot())
	go sc.Run(ctx)
}

type scrapeSink struct {
	set    *endpoints.Set
	index  *kvindex.Index
	notify func()
}

func (s scrapeSink) UpdateScrape(key string, st scrape.Status) {
	l := endpoints.Load{Excluded: st.Excluded, Reason: st.LastError, Fresh: st.HasSample && !st.Stale}
	if st.HasSample {
		sm := st.Sample
		l.Waiting, l.Running, l.KVUsage = sm.Waiting, sm.Running, sm.KVUsage
		l.BlockSize, l.TotalBlocks, l.At = sm.BlockSize, sm.TotalBlocks, sm.ScrapedAt
		l.RunningLoRA, l.MaxLoRA = sm.RunningLoRA, sm.MaxLoRA
	}
	if s.set.UpdateLoad(key, l) && l.TotalBlocks > 0 {
		if e, ok := s.set.Snapshot().Get(key); ok && e.Endpoint.Capacity.TotalBlocks == 0 {
			s.index.SetCapacity(key, l.TotalBlocks)
		}
	}
	s.notify()
}

// startEvents subscribes to every endpoint's KV event publisher.
func startEvents(ctx context.Context, cfg *v1.Config, set *endpoints.Set, rt *router.Router, log logr.Logger) {
	m := kvevents.NewManager(rt, log.WithName("kvevents"))
	sync := func(s *endpoints.Snapshot) {
		subs := make([]kvevents.SubscriberOptions, 0, len(s.List))
		for _, e := range s.List {
			ep := e.KVEvents
			if ep == "" {
				ep = "tcp://" + net.JoinHostPort(e.Address, strconv.Itoa(cfg.KV.EventsPort))
			}
			subs = append(subs, kvevents.SubscriberOptions{Endpoint: ep, ReplayEndpoint: e.KVEventsReplay, EndpointKey: e.Key()})
		}
		m.Sync(ctx, subs)
	}
	set.OnChange(sync)
	sync(set.Snapshot())
}
