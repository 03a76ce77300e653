package e2e

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

// Fault tests: real modelsim and kvpick processes on loopback, one fault
// each. Each says in its doc comment and its output what the fault cost; the
// rule is that nothing may be lost that the gateway could not retry.

// faultFleet is two or more sims behind one picker, from an endpoints file.
type faultFleet struct {
	sims   []*testutil.Sim
	eps    string
	picker *testutil.Picker
}

func startFaultFleet(t *testing.T, n int, simArgs []string, pickerArgs ...string) *faultFleet {
	t.Helper()
	f := &faultFleet{eps: filepath.Join(t.TempDir(), "endpoints.yaml")}
	for i := range n {
		f.sims = append(f.sims, testutil.StartSim(t, fmt.Sprintf("sim-%d", i),
			append([]string{"--seed", strconv.Itoa(i)}, simArgs...)...))
	}
	testutil.WriteEndpoints(t, f.eps, f.sims)
	f.picker = f.startPicker(t, pickerArgs...)
	return f
}

func (f *faultFleet) startPicker(t *testing.T, args ...string) *testutil.Picker {
	t.Helper()
	return testutil.StartPicker(t, append([]string{"--endpoints-file", f.eps}, args...)...)
}

func (f *faultFleet) sim(addr string) *testutil.Sim {
	for _, s := range f.sims {
		if s.Addr() == addr {
			return s
		}
	}
	return nil
}

func ep(addr string) string { return fmt.Sprintf("endpoint=%q", addr) }

// A KV-event publisher restarts: the engine behind sim X is killed and started
// again on the same ports with an empty cache and its sequence numbers back at
// 0. The picker notices on reconnecting (the new publisher's replay buffer
// lacks the last sequence it saw), before the engine publishes anything, and
// drops every block it believed X held: no stale block stays to attract
// requests to a cold engine. Lost: nothing (no request was in flight; X's
// cache was lost by the engine, not by the picker).
func TestFaultKVPublisherRestart(t *testing.T) {
	f := startFaultFleet(t, 2, nil, "--router-mode", "kv")
	c := testutil.DialPicker(t, f.picker.GRPC)
	shared := words("s", 1500)
	first := send(t, c, shared+words("q", 20))
	if first.Status != 200 {
		t.Fatalf("status %d: %s", first.Status, first.Body)
	}
	x := first.Endpoint
	blocks := func() float64 { return f.picker.Metric(t, "kvpick_kvindex_endpoint_blocks", ep(x)) }
	testutil.Eventually(t, "observed blocks on "+x, 15*time.Second, func() bool { return blocks() > 0 })
	before := blocks()

	s := f.sim(x)
	s.Kill(t)
	s.Start(t)
	took := testutil.Eventually(t, "publisher restart detected", 20*time.Second, func() bool {
		return f.picker.Metric(t, "kvpick_kvevents_publisher_restarts_total", ep(x)) >= 1
	})
	if after := blocks(); after != 0 {
		t.Fatalf("%v blocks still attributed to %s after its restart (before: %v)", after, x, before)
	}
	res := send(t, c, shared+words("r", 20))
	if res.Status != 200 {
		t.Fatalf("after the restart: status %d: %s", res.Status, res.Body)
	}
	testutil.Eventually(t, "events from the served engine", 15*time.Second, func() bool {
		return f.picker.Metric(t, "kvpick_kvindex_endpoint_blocks", ep(res.Endpoint)) > 0
	})
	t.Logf("publisher restart: %v blocks of %s dropped %.1f s after the engine was back; lost: nothing", before, x, took.Seconds())
}

// An endpoint dies with requests in flight: sim A is killed (SIGKILL) while
// slow streamed requests run on both sims. The requests on A fail at the
// gateway mid-response (a gateway retries them: nothing was lost that it could
// not retry); the picker counts them against A
// (kvpick_endpoint_unfinished_requests_total), frees their active work as
// their streams end, and excludes A at its first refused scrape; later
// requests all go to B.
func TestFaultEndpointDiesInFlight(t *testing.T) {
	f := startFaultFleet(t, 2, []string{"--step-overhead", "20ms"}, "--router-mode", "least-loaded")
	c := testutil.DialPicker(t, f.picker.GRPC)
	a, b := f.sims[0].Addr(), f.sims[1].Addr()
	active := func(addr string) float64 { return f.picker.Metric(t, "kvpick_endpoint_active_requests", ep(addr)) }
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outcome := slowRequest(c, i)
			mu.Lock()
			outcomes[outcome]++
			mu.Unlock()
		}()
	}
	// Killed once every request the picker sent to A runs there (the engine's
	// own count, scraped): none can still fall back to B at connect time.
	running := func(addr string) float64 { return f.picker.Metric(t, "kvpick_scrape_running_requests", ep(addr)) }
	testutil.Eventually(t, "requests running on both sims", 15*time.Second, func() bool {
		return active(a) >= 1 && active(b) >= 1 && running(a) >= active(a) && active(a)+active(b) == 6
	})
	onA := active(a)
	f.sims[0].Kill(t)
	wg.Wait()
	if outcomes["failed"] != int(onA) || outcomes["200 "+b] != 6-int(onA) {
		t.Fatalf("outcomes %v; %v were running on the killed %s", outcomes, onA, a)
	}
	if got := f.picker.Metric(t, "kvpick_endpoint_unfinished_requests_total", ep(a)); got != onA {
		t.Fatalf("kvpick_endpoint_unfinished_requests_total{%s} = %v, want %v", a, got, onA)
	}
	for _, m := range []string{"kvpick_endpoint_active_requests", "kvpick_endpoint_active_prefill_tokens", "kvpick_endpoint_active_decode_blocks"} {
		if v := f.picker.Metric(t, m, ep(a)); v != 0 {
			t.Fatalf("%s{%s} = %v after its streams ended", m, a, v)
		}
	}
	excluded := regexp.MustCompile(`endpoint excluded after consecutive scrape failures","endpoint":"` +
		regexp.QuoteMeta(a) + `".*"failures":(\d+)`)
	f.picker.Proc.WaitFor(t, excluded, 10*time.Second)
	if refusedBefore, at := firstRefusalExcludes(f.picker.Proc.Output(), a); refusedBefore || !at {
		t.Fatalf("%s not excluded at its first refused scrape (an earlier refusal: %v; the exclusion a refusal: %v)",
			a, refusedBefore, at)
	}
	for i := range 4 {
		if res := send(t, c, words(fmt.Sprintf("after%d", i), 50)); res.Status != 200 || res.Endpoint != b {
			t.Fatalf("after the death: status %d on %s, want 200 on %s", res.Status, res.Endpoint, b)
		}
	}
	t.Logf("endpoint death: %v requests in flight on %s failed mid-response and were counted (their clients see a broken stream and may retry); "+
		"their active work was freed; %s excluded at its first refused scrape", onA, a, a)
}

// slowRequest sends a long streamed completion and names its outcome:
// "200 <endpoint>" when served, "failed" when the upstream broke mid-response.
func slowRequest(c *envoyclient.Client, i int) string {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	body := fmt.Sprintf(`{"model":"m","prompt":%q,"max_tokens":300,"stream":true}`, words(fmt.Sprintf("slow%d", i), 100))
	res, err := c.Do(ctx, &http.Client{Timeout: 60 * time.Second}, envoyclient.Request{Method: "POST", Path: "/v1/completions", Body: []byte(body)})
	switch {
	case err != nil:
		return "failed"
	case res.Status != 200:
		return fmt.Sprintf("%d", res.Status)
	}
	return "200 " + res.Endpoint
}

// The picker restarts under load: kvpick is killed (SIGKILL) while requests
// keep arriving, and a new process starts on the same endpoints file. It
// rebuilds its view from the engines' KV-event replay buffers and from
// scraping (no peers: replica sync is not in this build); the test measures
// the seconds from its start to a warm view (every endpoint scraped and the
// observed index back to at least 90 % of the blocks it held before) and
// prints them. Lost: the requests that arrived while no picker was up were
// never routed (the gateway's failureMode decides: FailOpen sends them on
// without a picker, FailClose answers 503 and the client retries); none of
// those routed before the kill was lost at the engines. Requests whose
// ext_proc stream was open at the kill fail (Envoy resets them, or under
// FailOpen lets them through); none may fail once the new picker is up.
func TestFaultPickerRestartUnderLoad(t *testing.T) {
	f := startFaultFleet(t, 2, nil, "--router-mode", "kv")
	var picked testutil.Picked
	picked.Set(testutil.DialPicker(t, f.picker.GRPC))
	load := &testutil.Load{Rate: 40, Workers: 16, HTTP: &http.Client{Timeout: 30 * time.Second}, Client: picked.Get,
		Body: func(i int) []byte {
			return []byte(fmt.Sprintf(`{"model":"m","prompt":%q,"max_tokens":4,"stream":true}`,
				words(fmt.Sprintf("g%d", i%4), 600)+words(fmt.Sprintf("u%d", i), 10)))
		}}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { load.Run(ctx); close(done) }()
	defer func() { stop(); <-done }()

	blocks := func(p *testutil.Picker) float64 { return p.Metric(t, "kvpick_kvindex_endpoint_blocks") }
	testutil.Eventually(t, "a warm index", 20*time.Second, func() bool { return blocks(f.picker) > 200 })
	time.Sleep(time.Second)
	warm := blocks(f.picker)
	f.picker.Proc.Cmd.Process.Kill() //nolint:errcheck // checked by Wait
	f.picker.Proc.Wait(t, 10*time.Second)
	picked.Set(nil)
	killed := time.Now()

	p2 := f.startPicker(t, "--router-mode", "kv")
	ready := time.Since(p2.Started)
	cut := load.Stats() // what the kill cost, before the new picker takes requests
	picked.Set(testutil.DialPicker(t, p2.GRPC))
	testutil.Eventually(t, "every endpoint scraped", 20*time.Second, func() bool {
		return p2.Metric(t, "kvpick_scrape_endpoint_state", `state="ok"`) == float64(len(f.sims))
	})
	scraped := time.Since(p2.Started)
	testutil.Eventually(t, "the index rebuilt from replay", 20*time.Second, func() bool { return blocks(p2) >= 0.9*warm })
	rebuilt := time.Since(p2.Started)
	time.Sleep(time.Second) // some load on the new picker
	stop()
	<-done
	st := load.Stats()
	for status, n := range st.Status {
		if status != 200 {
			t.Fatalf("%d requests answered %d; stats %+v", n, status, st)
		}
	}
	broken := sum(cut.Errors)
	if sum(st.Errors) != broken { // Dropped counts the generator's own saturation (all workers busy), not failures
		t.Fatalf("requests failed once the new picker was up (%d failed before): %+v", broken, st)
	}
	t.Logf("picker restart: the new picker listened %.2f s after its start (%.2f s after the kill), scraped every "+
		"endpoint after %.2f s and had %v of %v index blocks back (%v batches replayed) after %.2f s (warm view); lost: %d "+
		"requests failed (their stream was open at the kill, or opened before the gateway saw it die) and %d "+
		"arrivals found no picker (all the gateway's to retry, or to route without a picker under failureMode "+
		"FailOpen); %d requests served",
		ready.Seconds(), time.Since(killed).Seconds()-time.Since(p2.Started).Seconds()+ready.Seconds(), scraped.Seconds(),
		blocks(p2), warm, p2.Metric(t, "kvpick_kvevents_replayed_batches_total"), rebuilt.Seconds(), broken, st.NoPicker, st.Status[200])
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// firstRefusalExcludes reads the picker's log for endpoint addr: whether a
// scrape was refused before the one that excluded it, and whether the one
// that excluded it was refused. A scrape under way when the engine died
// fails with a reset, not a refusal, and counts as an ordinary failure; the
// first refusal must exclude it.
func firstRefusalExcludes(log, addr string) (refusedBefore, excludedOnRefusal bool) {
	quoted := `"endpoint":"` + addr + `"`
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, quoted) {
			continue
		}
		refused := strings.Contains(line, "connection refused")
		switch {
		case strings.Contains(line, "endpoint excluded after consecutive scrape failures"):
			return refusedBefore, refused
		case strings.Contains(line, "metrics scrape failing") && refused:
			refusedBefore = true
		}
	}
	return refusedBefore, false
}
