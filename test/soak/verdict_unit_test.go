package soak

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kvpick/kvpick/internal/testutil"
)

// series is 40 samples of one replica over d: goroutines and heap goal start
// at g0 and h0 and grow linearly by gg and hg (fractions) by the end.
func series(d time.Duration, g0, h0, gg, hg float64) []sample {
	var out []sample
	for i := range 40 {
		at := float64(i) / 39
		out = append(out, sample{At: d * time.Duration(i) / 40, Goroutines: g0 * (1 + gg*at), HeapGoal: h0 * (1 + hg*at), GCs: float64(i)})
	}
	return out
}

func TestVerdict(t *testing.T) {
	d := 10 * time.Minute
	ok := testutil.LoadStats{Sent: 100, Status: map[int]int64{200: 90, 429: 5, 503: 5}}
	idle := []sample{{}}
	cases := []struct {
		name    string
		samples []sample
		st      testutil.LoadStats
		idle    []sample
		want    string // a failure containing this; "" for none
	}{
		{"flat", series(d, 100, 64<<20, 0, 0), ok, idle, ""},
		{"small wobble", series(d, 100, 64<<20, 0.1, 0.1), ok, idle, ""},
		{"goroutine leak", series(d, 100, 64<<20, 0.5, 0), ok, idle, "goroutines besides the streams grew"},
		{"heap leak", series(d, 100, 64<<20, 0, 0.4), testutil.LoadStats{Status: map[int]int64{200: 1}}, idle, "heap goal bytes grew"},
		{"few goroutines move by the floor", series(d, 20, 64<<20, 0.4, 0), ok, idle, ""},
		{"an unexpected status", series(d, 100, 64<<20, 0, 0), testutil.LoadStats{Status: map[int]int64{200: 9, 500: 1}}, idle, "answered 500"},
		{"transport errors", series(d, 100, 64<<20, 0, 0), testutil.LoadStats{Errors: map[string]int64{"timeout": 1}}, idle, "transport errors"},
		{"active work left", series(d, 100, 64<<20, 0, 0), ok, []sample{{Active: 3}}, "kept active work 3"},
		{"no samples", nil, ok, idle, "too few samples"},
		{"goroutines that serve streams are not a leak", streams(series(d, 100, 64<<20, 3, 0)), ok, idle, ""},
		{"no garbage collection", noGC(series(d, 100, 64<<20, 0, 0)), ok, idle, "too few samples"},
		{"heap not judged over few collections", fewGC(series(d, 100, 64<<20, 0, 0.4)), ok, idle, ""},
	}
	for _, tc := range cases {
		v := verdictOf(tc.samples, tc.st, tc.idle, d)
		got := strings.Join(v.failures, "; ")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: failures %q, want %q", tc.name, got, tc.want)
		}
	}
}

func noGC(ss []sample) []sample {
	for i := range ss {
		ss[i].GCs = 1
	}
	return ss
}

func fewGC(ss []sample) []sample {
	for i := range ss {
		ss[i].GCs = 2 + float64(i)/10
	}
	return ss
}

// streams makes every goroutine above the first sample's count one serving a stream.
func streams(ss []sample) []sample {
	for i := range ss {
		ss[i].Streams = ss[i].Goroutines - ss[0].Goroutines
	}
	return ss
}

func TestSpreadIgnoresWhatARequestIs(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4} {
		unstreamed := make([]int, n) // body(i) is unstreamed when i%3 == 0
		for i := range 30000 {
			r := spread(i, n)
			if r < 0 || r >= n {
				t.Fatalf("spread(%d, %d) = %d", i, n, r)
			}
			if i%3 == 0 {
				unstreamed[r]++
			}
		}
		for r, c := range unstreamed {
			if share := float64(c) / 10000; math.Abs(share-1/float64(n)) > 0.03 {
				t.Errorf("%d replicas: replica %d got %.0f%% of the unstreamed requests, want about %.0f%%", n, r, 100*share, 100/float64(n))
			}
		}
	}
}

func TestQueueByReplica(t *testing.T) {
	pages := []string{
		"kvpick_router_queue_wait_seconds_sum{outcome=\"dispatched\",pool=\"default\"} 3\nkvpick_router_queue_wait_seconds_count{outcome=\"dispatched\",pool=\"default\"} 10\n" +
			"kvpick_router_queue_wait_seconds_sum{outcome=\"queue_timeout\",pool=\"default\"} 300\nkvpick_router_queue_wait_seconds_count{outcome=\"queue_timeout\",pool=\"default\"} 10\n" +
			"kvpick_router_queue_pass_seconds_sum{pool=\"default\"} 0.5\nkvpick_router_queue_pass_seconds_count{pool=\"default\"} 1000\n",
		"",
	}
	want := "replica 0 queue: 10 requests queued, mean wait 300.0 ms; 1000 release passes, mean 0.500 ms\n" +
		"replica 1 queue: 0 requests queued, mean wait 0.0 ms; 0 release passes, mean 0.000 ms\n"
	if got := queueByReplica(pages); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestTimeSplitAveragesOverPages(t *testing.T) {
	pickers := []string{
		"kvpick_router_queue_wait_seconds_sum{outcome=\"dispatched\",pool=\"default\"} 3\nkvpick_router_queue_wait_seconds_count{outcome=\"dispatched\",pool=\"default\"} 10\n" +
			"kvpick_router_queue_wait_seconds_sum{outcome=\"queue_timeout\",pool=\"default\"} 300\nkvpick_router_queue_wait_seconds_count{outcome=\"queue_timeout\",pool=\"default\"} 10\n",
		"kvpick_router_queue_wait_seconds_sum{outcome=\"dispatched\",pool=\"default\"} 1\nkvpick_router_queue_wait_seconds_count{outcome=\"dispatched\",pool=\"default\"} 10\n",
	}
	engines := []string{"vllm:time_to_first_token_seconds_sum{model_name=\"m\"} 2\nvllm:time_to_first_token_seconds_count{model_name=\"m\"} 20\n",
		"vllm:time_to_first_token_seconds_sum{model_name=\"m\"} 1\nvllm:time_to_first_token_seconds_count{model_name=\"m\"} 10\n"}
	want := "mean wait in the pickers' queues 200.0 ms (20 requests queued); engines' own TTFT, mean 100.0 ms\n"
	if got := timeSplit(pickers, engines); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := timeSplit(nil, nil); got != "mean wait in the pickers' queues 0.0 ms (0 requests queued); engines' own TTFT, mean 0.0 ms\n" {
		t.Fatalf("no pages: %q", got)
	}
}
