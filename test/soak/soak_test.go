// Package soak runs mixed load through several kvpick replicas in front of a
// modelsim fleet, all real processes on loopback with real ext_proc streams,
// samples each replica's goroutines and memory, and checks at the end that
// they stayed flat, that nothing failed but the expected 429/503, and that
// every replica's active work went back to zero. `make test` runs it short
// (20 s at 100 requests/s); `make soak` runs it for 10 minutes at 1,000/s.
package soak

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvpick/kvpick/internal/mix"
	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

var (
	duration  = flag.Duration("soak.duration", 20*time.Second, "how long the load runs")
	rate      = flag.Float64("soak.rate", 100, "requests per second, spread over the replicas")
	replicas  = flag.Int("soak.replicas", 3, "kvpick replicas")
	sims      = flag.Int("soak.sims", 4, "modelsim servers")
	gpuBlocks = flag.Int("soak.gpu-blocks", 256, "KV blocks per modelsim (small: the caches and the picker's index fill early in the run)")
	workers   = flag.Int("soak.workers", 256, "requests in flight at most (an arrival finding none free is counted, not sent)")
	outDir    = flag.String("soak.out", "", "folder for samples.csv, the SVG plots and summary.txt (default: a temporary folder)")
	syncArgs  = flag.String("soak.picker-args", "", "extra kvpick flags, space-separated (e.g. the replica sync flags)")
	synced    = flag.Bool("soak.sync", false, "sync the replicas (replica sync over loopback, shared secret; each lists all)")
	order     = flag.String("soak.queue-order", "", "replicaSync.queueOrder of the synced replicas (local or shared; empty: the default)")
	simArgs   = flag.String("soak.sim-args", "", "extra modelsim flags, space-separated, after the soak's own (e.g. a lower --prefill-rate, so the fleet queues)")
	slack     = flag.Duration("soak.queue-slack", 0, "replicaSync.queueSlack of the synced replicas (0: the default)")
	lateAfter = flag.Duration("soak.late-after", -1, "admission.lateAfter of the synced replicas (0s: off; negative: the default)")
	batched   = flag.Int("soak.max-batched", 0, "each modelsim's max_num_batched_tokens, also stated as the endpoints' capacity.maxBatchedTokens (0: modelsim's default, 8192, not stated)")
)

// clientTimeout bounds one request at the load generator.
const clientTimeout = 60 * time.Second

func TestSoak(t *testing.T) {
	out := *outDir
	if out == "" {
		out = t.TempDir()
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	fleet := startFleet(t)
	// The client outlasts the picker's queue bound (admission.maxQueueWait,
	// 30 s) plus a generation: with the same 30 s, a request the picker
	// queued to its limit raced its own 429 and counted as a client error.
	// Keep a connection per worker: the default two idle per host had the
	// load generator dial and close a connection for most requests.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = *workers, *workers
	load := &testutil.Load{Rate: *rate, Workers: *workers, Body: body, Timeout: clientTimeout,
		HTTP:   &http.Client{Timeout: clientTimeout, Transport: tr},
		Client: func(i int) *envoyclient.Client { return fleet.clients[spread(i, len(fleet.clients))] }}
	every := min(max(*duration/40, 250*time.Millisecond), 5*time.Second)
	samples := runSampled(t, fleet, load, every)
	st := load.Stats()
	quiet := waitIdle(t, fleet)
	pickers, engines := saveMetrics(t, out, fleet)
	v := verdictOf(samples, st, quiet, *duration)
	v.text += timeSplit(pickers, engines)
	v.text += queueByReplica(pickers)
	if err := writeOutputs(out, samples, v); err != nil {
		t.Fatal(err)
	}
	t.Logf("soak: %s\noutputs in %s", v.text, out)
	for _, f := range v.failures {
		t.Error(f)
	}
}

// spread is the replica that gets the i-th request, as a gateway spreads
// streams: independent of what the request is. (i modulo the replica count
// sent every unstreamed request, a third of the load, to replica 0 when
// there were three: it never saw a first token apart from the last, so its
// learned rates and its decisions were unlike the others'.)
func spread(i, replicas int) int { return int(mix.Splitmix64(uint64(i)) % uint64(replicas)) }

// fleet is the sims and the picker replicas in front of them.
type fleet struct {
	sims    []*testutil.Sim
	pickers []*testutil.Picker
	clients []*envoyclient.Client
}

func startFleet(t *testing.T) *fleet {
	t.Helper()
	var ss []*testutil.Sim
	for i := range *sims {
		args := []string{"--seed", strconv.Itoa(i), "--step-overhead", "1ms",
			"--prefill-rate", "400000", "--num-gpu-blocks", strconv.Itoa(*gpuBlocks)}
		if *batched > 0 {
			args = append(args, "--max-num-batched-tokens", strconv.Itoa(*batched))
		}
		args = append(args, strings.Fields(*simArgs)...)
		ss = append(ss, testutil.StartSim(t, fmt.Sprintf("sim-%d", i), args...))
	}
	eps := filepath.Join(t.TempDir(), "endpoints.yaml")
	extra := ""
	if *batched > 0 { // vLLM's metrics do not carry the step budget: the picker reads it here
		extra = fmt.Sprintf("capacity: {maxBatchedTokens: %d}", *batched)
	}
	testutil.WriteEndpointsWith(t, eps, ss, extra)
	f := &fleet{sims: ss}
	peerArgs := syncConfigs(t, *replicas)
	for i := range *replicas {
		args := append([]string{"--endpoints-file", eps, "--router-mode", "kv"}, strings.Fields(*syncArgs)...)
		args = append(args, peerArgs[i]...)
		p := testutil.StartPicker(t, args...)
		f.pickers = append(f.pickers, p)
		f.clients = append(f.clients, testutil.DialPicker(t, p.GRPC))
	}
	return f
}

// runSampled runs the load for the soak's duration while sampling every
// replica each interval; the last sample is taken after the load ended.
func runSampled(t *testing.T, f *fleet, load *testutil.Load, every time.Duration) []sample {
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	done := make(chan struct{})
	go func() { load.Run(ctx); close(done) }()
	start := time.Now()
	var out []sample
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return append(out, sampleAll(t, f, time.Since(start))...)
		case <-tick.C:
			out = append(out, sampleAll(t, f, time.Since(start))...)
		}
	}
}

// saveMetrics keeps each replica's and each sim's /metrics page after the
// load as metrics-replica-N.txt and metrics-sim-N.txt beside the summary
// (and each replica's log as kvpick-N.log), and returns the pages: the counters a run's numbers need explaining by (queue
// holds, events dropped or missed, each engine's requests and its own TTFT)
// are there.
func saveMetrics(t *testing.T, dir string, f *fleet) (pickers, engines []string) {
	save := func(name, addr string) string {
		text, err := testutil.MetricsText(addr)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
		}
		if err != nil {
			t.Errorf("%s after the load: %v", name, err)
		}
		return text
	}
	for i, p := range f.pickers {
		pickers = append(pickers, save(fmt.Sprintf("metrics-replica-%d.txt", i), p.Metrics))
		// Its log too: with -soak.picker-args="-v 2" every decision and the view it was made on.
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("kvpick-%d.log", i)), []byte(p.Proc.Output()), 0o644); err != nil {
			t.Errorf("kvpick-%d.log: %v", i, err)
		}
	}
	for i, s := range f.sims {
		engines = append(engines, save(fmt.Sprintf("metrics-sim-%d.txt", i), fmt.Sprintf("127.0.0.1:%d", s.Port)))
	}
	return pickers, engines
}

// timeSplit says where a request's time to first token went, on average:
// waiting in the pickers' admission queues, and at the engines (their own
// TTFT, from arrival there). Three replicas against one differ in the second
// (README "Several replicas").
func timeSplit(pickers, engines []string) string {
	mean := func(pages []string, name string, match ...string) (float64, float64) {
		var sum, n float64
		for _, p := range pages {
			sum += testutil.SumSeries(p, name+"_sum", match...)
			n += testutil.SumSeries(p, name+"_count", match...)
		}
		return sum / max(n, 1), n
	}
	q, queued := mean(pickers, "kvpick_router_queue_wait_seconds", `outcome="dispatched"`)
	e, _ := mean(engines, "vllm:time_to_first_token_seconds")
	return fmt.Sprintf("mean wait in the pickers' queues %.1f ms (%.0f requests queued); engines' own TTFT, mean %.1f ms\n", 1000*q, queued, 1000*e)
}

// queueByReplica says, per replica, how many requests waited in its queue
// and how long, and how many release passes it ran and how long they took:
// a replica whose queue stands while its peers' are empty (README "Soak")
// shows there, and whether its passes grew with it.
func queueByReplica(pickers []string) string {
	var b strings.Builder
	for i, p := range pickers {
		wait := testutil.SumSeries(p, "kvpick_router_queue_wait_seconds_sum", `outcome="dispatched"`)
		queued := testutil.SumSeries(p, "kvpick_router_queue_wait_seconds_count", `outcome="dispatched"`)
		pass := testutil.SumSeries(p, "kvpick_router_queue_pass_seconds_sum")
		passes := testutil.SumSeries(p, "kvpick_router_queue_pass_seconds_count")
		fmt.Fprintf(&b, "replica %d queue: %.0f requests queued, mean wait %.1f ms; %.0f release passes, mean %.3f ms\n",
			i, queued, 1000*wait/max(queued, 1), passes, 1000*pass/max(passes, 1))
	}
	return b.String()
}

// waitIdle waits until every replica has no active work and no open stream,
// and returns the last reading of each (all zero unless it timed out).
func waitIdle(t *testing.T, f *fleet) []sample {
	var last []sample
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		last = sampleAll(t, f, 0)
		if allIdle(last) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return last
}

// syncConfigs gives each replica its replica-sync flags with -soak.sync
// (its own peer port, every replica's address as peers, one shared secret),
// and none without.
func syncConfigs(t *testing.T, n int) [][]string {
	t.Helper()
	out := make([][]string, n)
	if !*synced {
		return out
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("soak-peer-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	}
	for i := range out {
		cfg := filepath.Join(dir, fmt.Sprintf("sync-%d.yaml", i))
		body := fmt.Sprintf("replicaSync:\n  mode: peers\n  listenAddr: %s\n  secretFile: secret\n", addrs[i])
		if *order != "" {
			body += fmt.Sprintf("  queueOrder: %s\n", *order)
		}
		if *slack > 0 {
			body += fmt.Sprintf("  queueSlack: %s\n", *slack)
		}
		if *lateAfter >= 0 {
			body += fmt.Sprintf("admission:\n  lateAfter: %s\n", *lateAfter)
		}
		if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		out[i] = []string{"--config", cfg, "--peers", strings.Join(addrs, ",")}
	}
	return out
}
