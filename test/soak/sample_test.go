package soak

import (
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvpick/kvpick/internal/mix"
	"github.com/kvpick/kvpick/internal/testutil"
)

// sample is one replica's reading at one moment.
type sample struct {
	At         time.Duration // since the load started
	Replica    int
	Goroutines float64 // go_goroutines
	HeapInuse  float64 // go_memstats_heap_inuse_bytes: what the heap holds now (swings with the GC cycle)
	HeapGoal   float64 // go_memstats_next_gc_bytes: the next GC's target, proportional to the heap live after the last one
	Active     float64 // requests, prefill tokens and decode blocks of active work, summed over endpoints
	Streams    float64 // kvpick_active_streams
	Prefill    float64 // kvpick_endpoint_active_prefill_tokens summed: replicas in sync see about the same
	Queued     float64 // kvpick_router_queue_pending_requests: waiting in this replica's admission queue
	Requests   float64 // kvpick_requests_total, every outcome
	GCs        float64 // go_gc_duration_seconds_count: collections so far
	Err        string  // the metrics page could not be read
	Left       string  // the active-work series not at zero, as the page shows them
}

// leftover lists the page's active-work series whose value is not zero.
func leftover(text string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for _, name := range activeSeries {
			if strings.HasPrefix(line, name+"{") && !strings.HasSuffix(line, " 0") {
				out = append(out, line)
			}
		}
	}
	return strings.Join(out, "; ")
}

// activeSeries are the active-work gauges that must return to zero.
// With replica sync, peers' requests still counted here must end too.
var activeSeries = []string{"kvpick_endpoint_active_requests", "kvpick_endpoint_active_prefill_tokens", "kvpick_endpoint_active_decode_blocks",
	"kvpick_replicasync_remote_inflight_requests"}

// sampleAll reads every replica at once, so a slow page does not delay the others.
func sampleAll(t *testing.T, f *fleet, at time.Duration) []sample {
	out := make([]sample, len(f.pickers))
	var wg sync.WaitGroup
	for i, p := range f.pickers {
		wg.Add(1)
		go func() { defer wg.Done(); out[i] = read(p.Metrics, at, i) }()
	}
	wg.Wait()
	return out
}

func read(addr string, at time.Duration, replica int) sample {
	s := sample{At: at, Replica: replica}
	text, err := testutil.MetricsText(addr)
	if err != nil {
		s.Err = err.Error()
		return s
	}
	s.Goroutines = testutil.SumSeries(text, "go_goroutines")
	s.HeapInuse = testutil.SumSeries(text, "go_memstats_heap_inuse_bytes")
	s.HeapGoal = testutil.SumSeries(text, "go_memstats_next_gc_bytes")
	for _, name := range activeSeries {
		s.Active += testutil.SumSeries(text, name)
	}
	if s.Active != 0 {
		s.Left = leftover(text)
	}
	s.Streams = testutil.SumSeries(text, "kvpick_active_streams")
	s.Prefill = testutil.SumSeries(text, "kvpick_endpoint_active_prefill_tokens")
	s.Queued = testutil.SumSeries(text, "kvpick_router_queue_pending_requests")
	s.Requests = testutil.SumSeries(text, "kvpick_requests_total")
	s.GCs = testutil.SumSeries(text, "go_gc_duration_seconds_count")
	return s
}

func allIdle(ss []sample) bool {
	for _, s := range ss {
		if s.Err != "" || s.Active != 0 || s.Streams != 0 {
			return false
		}
	}
	return true
}

// body is the i-th request of the mixed load: 60 % share one of 16 prefixes
// (300 tokens) and add a question, 20 % are unique 600-token documents, 20 %
// short prompts; a third of them unstreamed; output 4 to 16 tokens.
func body(i int) []byte {
	var prompt string
	switch k := i % 10; {
	case k < 6:
		prompt = sharedPrefix(i%16) + words(fmt.Sprintf("q%d", i), 20)
	case k < 8:
		prompt = words(fmt.Sprintf("d%d", i), 600)
	default:
		prompt = words(fmt.Sprintf("s%d", i), 30)
	}
	stream := i%3 != 0
	return []byte(fmt.Sprintf(`{"model":"m","prompt":%q,"max_tokens":%d,"stream":%v}`, prompt, 4+i%13, stream))
}

// prefixes are the 16 shared 300-word prefixes, built once: the load
// generator shares the machine with what it measures.
var prefixes = func() (p [16]string) {
	for i := range p {
		p[i] = words(fmt.Sprintf("p%d", i), 300)
	}
	return p
}()

func sharedPrefix(i int) string { return prefixes[i] }

// words is n one-token words (the approximate tokenizer's) drawn from a
// sequence seeded by tag: different tags part at the first word.
func words(tag string, n int) string {
	h := fnv.New64a()
	h.Write([]byte(tag))
	x := h.Sum64()
	b := make([]byte, 0, n*5)
	const hex = "0123456789abcdef"
	for range n {
		x = mix.Splitmix64(x + 0x9e3779b97f4a7c15)
		v := x % 4096
		b = append(b, ' ', tag[0], hex[v>>8], hex[v>>4&15], hex[v&15])
	}
	return string(b)
}
