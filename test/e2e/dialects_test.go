package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

// sim is one modelsim process of a dialect fleet.
type sim struct {
	args   []string // dialect flags
	fields string   // extra endpoints-file fields, e.g. "engine: trtllm"
	events string   // ZMQ endpoint to publish on; "" picks a free port and names it in kvEvents
	noKV   bool     // publish no events
}

// startSims starts the modelsim processes, writes the endpoints file and
// starts kvpick with args (and config, when not empty).
func startSims(t *testing.T, sims []sim, config string, args ...string) *fleet {
	t.Helper()
	dir := t.TempDir()
	f := &fleet{eps: filepath.Join(dir, "endpoints.yaml")}
	bin := testutil.Binary(t, "modelsim")
	for i, s := range sims {
		a := []string{"--port", "0", "--model", "m", "--step-overhead", "1ms", "--prefill-rate", "200000", "--seed", strconv.Itoa(i)}
		kv := ""
		if !s.noKV {
			ev := s.events
			if ev == "" {
				ev = fmt.Sprintf("tcp://127.0.0.1:%d", freePort(t))
				kv = fmt.Sprintf(", kvEvents: %q", ev)
			}
			a = append(a, "--kv-events-endpoint", ev)
		}
		p := testutil.Start(t, bin, append(a, s.args...)...)
		addr := p.WaitFor(t, listenRe, 20*time.Second)
		port, _ := strconv.Atoi(addr[strings.LastIndex(addr, ":")+1:])
		f.ports = append(f.ports, port)
		extra := ""
		if s.fields != "" {
			extra = ", " + s.fields
		}
		f.lines = append(f.lines, fmt.Sprintf("- {name: sim-%d, address: 127.0.0.1, port: %d, models: [m]%s%s}", i, port, kv, extra))
		f.modelsim = append(f.modelsim, p)
	}
	f.writeEndpoints(t, f.lines)
	ready := filepath.Join(dir, "ready.json")
	base := []string{"--endpoints-file", f.eps, "--grpc-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--plaintext",
		"--ready-file", ready}
	if config != "" {
		path := filepath.Join(dir, "kvpick.yaml")
		if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		base = append(base, "--config", path)
	}
	f.kvpick = testutil.Start(t, testutil.Binary(t, "kvpick"), append(base, args...)...)
	addrs := readReady(t, f.kvpick, ready, 20*time.Second)
	f.grpc, f.metrics = addrs["grpc"], addrs["metrics"]
	if f.grpc == "" || f.metrics == "" {
		t.Fatalf("ready file %v lacks an address", addrs)
	}
	return f
}

// sendBody routes and serves one completion with extra body fields.
func sendBody(t *testing.T, c *envoyclient.Client, prompt, extra string) *envoyclient.GatewayResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := fmt.Sprintf(`{"model":"m","prompt":%q,"max_tokens":4%s}`, prompt, extra)
	res, err := c.Do(ctx, &http.Client{Timeout: 30 * time.Second}, envoyclient.Request{Method: "POST", Path: "/v1/completions", Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (f *fleet) waitMetric(t *testing.T, name string, ok func(float64) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !ok(f.metric(t, name)) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s = %v", what, name, f.metric(t, name))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// followsCache warms a shared prefix on one endpoint, then checks that
// requests sharing it go there and are credited with observed hits: the
// picker decoded the dialect's events and placed its blocks.
func followsCache(t *testing.T, f *fleet, extra string) {
	t.Helper()
	c := testutil.DialPicker(t, f.grpc)
	before := map[string]float64{}
	for _, port := range f.ports { // every publisher heard first (a probe each): see heard
		f.heard(t, port, "m")
		before[fmt.Sprintf("127.0.0.1:%d", port)] = f.metric(t, storedMetric(port))
	}
	shared := words("s", 600)
	first := sendBody(t, c, shared+words("q", 20), extra)
	if first.Status != 200 {
		t.Fatalf("status %d: %s", first.Status, first.Body)
	}
	f.waitMetric(t, `kvpick_kvevents_events_total{endpoint="`+first.Endpoint+`",type="BlockStored"}`,
		func(v float64) bool { return v > before[first.Endpoint] }, "no BlockStored of the first request reached kvpick")
	for i := 0; i < 5; i++ {
		res := sendBody(t, c, shared+words(fmt.Sprintf("r%d", i), 20), extra)
		if res.Status != 200 || res.Endpoint != first.Endpoint {
			t.Fatalf("request %d: status %d on %s, want the cache holder %s", i, res.Status, res.Endpoint, first.Endpoint)
		}
	}
	if hits := f.metric(t, `kvpick_kv_hit_ratio_sum{observation="events",pool="default"}`); hits < 4 {
		t.Fatalf("observed-path hit ratio sum %v over 5 requests on a cached prefix, want > 4", hits)
	}
	if bad := f.metric(t, `kvpick_kvevents_events_total{endpoint="`+first.Endpoint+`",type="invalid"}`); bad != 0 {
		t.Fatalf("%v events rejected as invalid", bad)
	}
}

// Each engine dialect's KV events drive routing through real processes and
// a real ZMQ socket. --router-kv-events keeps every endpoint on the events
// path, so the credit can only come from the decoded events (the default
// "auto" would also credit the picker's first decision, made before any event).
func TestDialectsDriveRouting(t *testing.T) {
	cases := []struct {
		name, extra string
		args        []string
		kvpick      []string
	}{
		{"vllm v0.2x mixed", "", []string{"--kv-events-encoding", "mixed"}, nil},
		{"vllm today hybrid bytes hashes", "", []string{"--kv-events-encoding", "map", "--kv-events-hybrid", "--kv-events-bytes-hashes"}, nil},
		{"sglang positional salted", `,"cache_salt":"tenant-1"`, []string{"--kv-events-encoding", "array", "--kv-events-cache-salt", "tenant-1",
			"--metrics-style", "sglang"}, nil},
		{"sglang map era salted", `,"cache_salt":"tenant-1"`, []string{"--kv-events-encoding", "map", "--kv-events-cache-salt", "tenant-1",
			"--metrics-style", "sglang-gauges"}, nil},
		{"page size 32", "", []string{"--block-size", "32"}, []string{"--kv-cache-block-size", "32"}},
		// kv.blockSize stays 16: each endpoint's size comes from its events (and scraped cache config)
		{"page size 32 from the engine", "", []string{"--block-size", "32"}, nil},
		{"sglang page size 1 from the engine", "", []string{"--block-size", "1", "--metrics-style", "sglang"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fields := ""
			if strings.Contains(strings.Join(tc.args, " "), "sglang") {
				fields = "engine: sglang"
			}
			s := sim{args: tc.args, fields: fields}
			f := startSims(t, []sim{s, s}, "", append([]string{"--router-mode", "kv", "--router-kv-events"}, tc.kvpick...)...)
			followsCache(t, f, tc.extra)
		})
	}
}

// Data-parallel ranks publish on port + rank; each rank is its own endpoint
// with its own cache, its events read at kv.eventsPort + dpRank.
func TestDialectDataParallelRanks(t *testing.T) {
	base := freePortPair(t)
	ev := fmt.Sprintf("tcp://127.0.0.1:%d", base)
	sims := []sim{{args: []string{"--dp-rank", "0"}, events: ev, fields: "dpRank: 0"}, {args: []string{"--dp-rank", "1"}, events: ev, fields: "dpRank: 1"}}
	f := startSims(t, sims, fmt.Sprintf("kv:\n  eventsPort: %d\n", base), "--router-mode", "kv", "--router-kv-events")
	c := testutil.DialPicker(t, f.grpc)
	holders := map[string]string{} // endpoint -> its prefix
	for i := 0; i < 12 && len(holders) < 2; i++ {
		prefix := words(fmt.Sprintf("p%d", i), 600)
		res := sendBody(t, c, prefix+words("q", 20), "")
		if res.Status != 200 {
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
		if _, ok := holders[res.Endpoint]; !ok {
			holders[res.Endpoint] = prefix
		}
	}
	if len(holders) != 2 {
		t.Fatalf("both ranks never served a first request: %v", holders)
	}
	for ep := range holders {
		f.waitMetric(t, `kvpick_kvevents_events_total{endpoint="`+ep+`",type="BlockStored"}`, func(v float64) bool { return v > 0 },
			"no BlockStored for rank endpoint "+ep)
	}
	for ep, prefix := range holders {
		for i := 0; i < 3; i++ {
			if res := sendBody(t, c, prefix+words(fmt.Sprintf("r%d", i), 20), ""); res.Endpoint != ep {
				t.Fatalf("prefix cached on %s went to %s: events of a rank attributed to the wrong endpoint", ep, res.Endpoint)
			}
		}
	}
}

// freePortPair finds a port p with p+1 also free (a rank-1 publisher binds p+1).
func freePortPair(t *testing.T) int {
	t.Helper()
	for i := 0; i < 20; i++ {
		p := freePort(t)
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1)); err == nil {
			l.Close()
			return p
		}
	}
	t.Fatal("no two adjacent free ports")
	return 0
}

// trtllm-serve serves Prometheus text at /prometheus/metrics; the picker
// scrapes it there by default. An endpoint pointed at its JSON /metrics is
// excluded, and the 503 names the endpoint and why.
func TestDialectTRTLLMServeMetrics(t *testing.T) {
	t.Run("default path", func(t *testing.T) {
		f := startSims(t, []sim{{args: []string{"--metrics-style", "trtllm"}, fields: "engine: trtllm", noKV: true}}, "", "--router-mode", "least-loaded")
		key := fmt.Sprintf("127.0.0.1:%d", f.ports[0])
		f.waitMetric(t, `kvpick_scrape_endpoint_state{endpoint="`+key+`",state="ok"}`, func(v float64) bool { return v == 1 }, "trtllm-serve not scraped")
		if res := sendBody(t, testutil.DialPicker(t, f.grpc), words("a", 50), ""); res.Status != 200 {
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
	})
	t.Run("json page", func(t *testing.T) {
		f := startSims(t, []sim{{args: []string{"--metrics-style", "trtllm"}, fields: "engine: trtllm, metricsPath: /metrics", noKV: true}},
			"", "--router-mode", "least-loaded")
		key := fmt.Sprintf("127.0.0.1:%d", f.ports[0])
		f.waitMetric(t, `kvpick_scrape_endpoint_state{endpoint="`+key+`",state="excluded"}`, func(v float64) bool { return v == 1 }, "JSON page not excluded")
		res := sendBody(t, testutil.DialPicker(t, f.grpc), words("a", 50), "")
		body := string(res.Body)
		if res.Status != 503 || !strings.Contains(body, "scrape "+key+": parse: /metrics") || !strings.Contains(body, "/prometheus/metrics") {
			t.Fatalf("status %d body %s: want 503 naming the endpoint, the page and the fix", res.Status, body)
		}
	})
}

// With CPU offload reported (every store also on the CPU tier), a prefix the
// GPU evicted is still credited, at kv.hostHitWeight, where its CPU copy is:
// the GPU removal must not delete the CPU entry.
func TestDialectCPUTierOutlivesGPUEviction(t *testing.T) {
	s := sim{args: []string{"--kv-events-offload", "--num-gpu-blocks", "100"}}
	// The blocks cost isolates the tier credit from rate learning: under the
	// time model, a TTFT slowed by a loaded test machine can teach a's rate to
	// look slower than the untried b's, which then wins on a cold prefix.
	f := startSims(t, []sim{s, s}, "router:\n  kvCost:\n    model: blocks\n", "--router-mode", "kv", "--router-kv-events")
	c := testutil.DialPicker(t, f.grpc)
	a := fmt.Sprintf("127.0.0.1:%d", f.ports[0])
	prefix := words("s", 600)
	if res := sendTo(t, c, prefix+words("q", 20), a); res.Status != 200 || res.Endpoint != a {
		t.Fatalf("status %d on %s, want 200 on %s", res.Status, res.Endpoint, a)
	}
	for i := 0; i < 5; i++ { // other prompts on a evict the prefix from its GPU
		if res := sendTo(t, c, words(fmt.Sprintf("e%d", i), 600), a); res.Status != 200 {
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
	}
	f.waitMetric(t, `kvpick_kvevents_events_total{endpoint="`+a+`",type="BlockRemoved"}`, func(v float64) bool { return v > 0 },
		"the GPU never evicted")
	time.Sleep(200 * time.Millisecond) // let the last batches land
	hitsBefore := f.metric(t, `kvpick_kv_hit_ratio_sum{observation="events",pool="default"}`)
	res := sendBody(t, c, prefix+words("r", 20), "")
	if res.Status != 200 || res.Endpoint != a {
		t.Fatalf("status %d on %s, want the CPU-tier holder %s", res.Status, res.Endpoint, a)
	}
	if credit := f.metric(t, `kvpick_kv_hit_ratio_sum{observation="events",pool="default"}`) - hitsBefore; credit < 0.5 || credit > 0.8 {
		t.Fatalf("hit ratio %.2f for a prefix held only on the CPU tier, want about 0.75 (kv.hostHitWeight)", credit)
	}
}

// sendTo routes one completion within the subset hint {ep}.
func sendTo(t *testing.T, c *envoyclient.Client, prompt, ep string) *envoyclient.GatewayResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := fmt.Sprintf(`{"model":"m","prompt":%q,"max_tokens":4}`, prompt)
	res, err := c.Do(ctx, &http.Client{Timeout: 30 * time.Second}, envoyclient.Request{Method: "POST", Path: "/v1/completions",
		Body: []byte(body), Subset: []string{ep}, SubsetPresent: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
