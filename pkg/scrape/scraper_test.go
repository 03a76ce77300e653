package scrape

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// page serves a testdata file.
func page(t *testing.T, name string) http.HandlerFunc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(b) }
}

// server starts an httptest server on 127.0.0.1 counting requests.
func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func target(srv *httptest.Server, e Engine) Target {
	return Target{Key: srv.Listener.Addr().String(), URL: srv.URL + "/metrics", Engine: e}
}

// start runs a scraper until the test ends.
func start(t *testing.T, o Options, sink Sink, log logr.Logger, ts ...Target) *Scraper {
	t.Helper()
	s := New(o, sink, log)
	s.SetTargets(ts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return s
}

var fast = Options{Interval: 10 * time.Millisecond, Timeout: 50 * time.Millisecond, StaleAfter: time.Second}

func TestScrapeSuccess(t *testing.T) {
	srv, _ := server(t, page(t, "vllm.txt"))
	sink := &recSink{}
	tg := target(srv, EngineVLLM)
	s := start(t, fast, sink, logr.Discard(), tg)
	st := sink.waitFor(t, "a sample", func(st Status) bool { return st.HasSample })
	if st.Sample.Waiting != 3 || st.Sample.Running != 7 || st.Sample.TotalBlocks != 27306 || st.Stale ||
		st.Excluded || st.ConsecutiveFailures != 0 || st.LastError != "" || st.Sample.ScrapedAt.IsZero() {
		t.Errorf("status %+v", st)
	}
	if got, ok := s.Status(tg.Key); !ok || got.Sample.Running != 7 {
		t.Errorf("Status(%s) = %+v, %v", tg.Key, got, ok)
	}
	if _, ok := s.Status("10.9.9.9:1"); ok {
		t.Error("Status of unknown key reported ok")
	}
	if v, ok := metricValue(t, "kvpick_scrape_waiting_requests", map[string]string{"endpoint": tg.Key}); !ok || v != 3 {
		t.Errorf("waiting gauge = %v, %v; want 3", v, ok)
	}
	if v, _ := metricValue(t, "kvpick_scrape_endpoint_state", map[string]string{"endpoint": tg.Key, "state": "ok"}); v != 1 {
		t.Errorf("state ok gauge = %v, want 1", v)
	}
}

func TestScrapeFailures(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	tests := []struct {
		name   string
		h      http.HandlerFunc
		reason string
	}{
		{"http 500", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", 500) }, "http_status"},
		{"timeout", func(_ http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-block:
			}
		}, "timeout"},
		{"garbage body", page(t, "garbage.txt"), "parse"},
		{"wrong engine", page(t, "sglang.txt"), "parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := server(t, tt.h)
			opts := fast
			if tt.reason != "timeout" { // a loaded machine must not turn these into timeouts
				opts.Timeout = 5 * time.Second
			}
			checkFailure(t, opts, target(srv, EngineVLLM), tt.reason)
		})
	}
	t.Run("connect refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		checkFailure(t, fast, Target{Key: addr, URL: "http://" + addr + "/metrics"}, "connect")
	})
}

func checkFailure(t *testing.T, opts Options, tg Target, reason string) {
	t.Helper()
	sink := &recSink{}
	start(t, opts, sink, logr.Discard(), tg)
	st := sink.waitFor(t, "two failures", func(st Status) bool { return st.ConsecutiveFailures >= 2 })
	if st.HasSample || !st.Stale || !strings.HasPrefix(st.LastError, reason+":") {
		t.Errorf("status %+v, want no sample, stale, error with reason %s", st, reason)
	}
	labels := map[string]string{"endpoint": tg.Key, "reason": reason}
	if v, ok := metricValue(t, "kvpick_scrape_errors_total", labels); !ok || v < 2 {
		t.Errorf("errors_total%v = %v, want >= 2", labels, v)
	}
}

func TestScrapeTargetRemovalStopsPolling(t *testing.T) {
	srv, hits := server(t, page(t, "vllm.txt"))
	sink := &recSink{}
	tg := target(srv, EngineVLLM)
	s := start(t, fast, sink, logr.Discard(), tg)
	sink.waitFor(t, "a sample", func(st Status) bool { return st.HasSample })
	s.SetTargets(nil)
	// A scrape already on the wire when the target went may still land (the
	// server counts it late on a loaded machine); polling must stop after it.
	time.Sleep(2 * fast.Interval)
	before, updates := hits.Load(), sink.count()
	time.Sleep(10 * fast.Interval)
	if after := hits.Load(); after != before {
		t.Errorf("%d requests after removal", after-before)
	}
	if n := sink.count(); n != updates {
		t.Errorf("%d sink updates after removal", n-updates)
	}
	if _, ok := s.Status(tg.Key); ok {
		t.Error("removed target still has a status")
	}
	if _, ok := metricValue(t, "kvpick_scrape_endpoint_state", map[string]string{"endpoint": tg.Key}); ok {
		t.Error("removed endpoint still has state series")
	}
}

func TestScrapeTargetsBeforeAndAfterRun(t *testing.T) {
	srvA, _ := server(t, page(t, "vllm.txt"))
	srvB, _ := server(t, page(t, "sglang.txt"))
	sink := &recSink{}
	s := start(t, fast, sink, logr.Discard(), target(srvA, EngineVLLM))
	sink.waitFor(t, "A sampled", func(st Status) bool { return st.HasSample })
	b := target(srvB, EngineSGLang)
	s.SetTargets([]Target{target(srvA, EngineVLLM), b})
	deadline := time.Now().Add(5 * time.Second)
	for {
		if st, ok := s.Status(b.Key); ok && st.HasSample && st.Sample.Waiting == 2826 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("target added while running was never sampled")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := s.Run(context.Background()); err == nil {
		t.Error("second Run succeeded")
	}
}

// TestScrapeTransitions drives ok -> failing/stale -> excluded -> recovered
// and checks that each transition is logged once, in order.
func TestScrapeTransitions(t *testing.T) {
	var failing atomic.Bool
	ok := page(t, "vllm.txt")
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		ok(w, r)
	})
	o := Options{Interval: 10 * time.Millisecond, Timeout: 50 * time.Millisecond, StaleAfter: 40 * time.Millisecond, ExcludeAfter: 15}
	sink, logs := &recSink{}, &logLines{}
	tg := target(srv, EngineVLLM)
	s := start(t, o, sink, logs.logger(), tg)
	sink.waitFor(t, "ok", func(st Status) bool { return st.HasSample })
	failing.Store(true)
	st := sink.waitFor(t, "stale", func(st Status) bool { return st.Stale })
	if !st.HasSample || st.Sample.Running != 7 {
		t.Errorf("stale status lost its sample: %+v", st)
	}
	sink.waitFor(t, "excluded", func(st Status) bool { return st.Excluded })
	if st, _ := s.Status(tg.Key); !st.Stale || !st.Excluded || st.ConsecutiveFailures < 15 {
		t.Errorf("Status while excluded = %+v", st)
	}
	if v, _ := metricValue(t, "kvpick_scrape_endpoint_state", map[string]string{"endpoint": tg.Key, "state": "excluded"}); v != 1 {
		t.Errorf("state excluded gauge = %v, want 1", v)
	}
	failing.Store(false)
	sink.waitFor(t, "recovery", func(st Status) bool { return !st.Stale && !st.Excluded && st.ConsecutiveFailures == 0 })
	got := strings.Join(logs.matching(msgFailing, msgStale, msgExcluded, msgRecovered), ",")
	want := strings.Join([]string{msgFailing, msgStale, msgExcluded, msgRecovered}, ",")
	if got != want && got != strings.TrimPrefix(want, msgFailing+",") {
		t.Errorf("transition log lines = %s", got)
	}
}

// trtllm-serve answers /metrics with JSON: the failure names the page and
// where its Prometheus text is, so the 503 that follows says what to fix.
func TestScrapeJSONPageNamesTheFix(t *testing.T) {
	srv, _ := server(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[{"iter": 1, "kvCacheStats": {"usedNumBlocks": 3}}]`))
	})
	tg := target(srv, EngineTRTLLM)
	sink := &recSink{}
	start(t, fast, sink, logr.Discard(), tg)
	st := sink.waitFor(t, "a failure", func(st Status) bool { return st.ConsecutiveFailures >= 1 })
	for _, want := range []string{"parse: /metrics: ", "is JSON", "/prometheus/metrics"} {
		if !strings.Contains(st.LastError, want) {
			t.Errorf("LastError %q lacks %q", st.LastError, want)
		}
	}
}
