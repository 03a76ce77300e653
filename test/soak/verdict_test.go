package soak

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/kvpick/kvpick/internal/testutil"
)

// Flatness: a replica's goroutines and heap are flat when the median of the
// run's last tenth is at most the median of its second tenth times 1+growth,
// or that plus an absolute floor for small values. The first tenth is
// warm-up (caches, the index and the pools fill), and the second starts no
// earlier than the second garbage collection: before it the heap goal is the
// runtime's minimum, not a function of the live heap. The tenths are of the
// samples taken from there on (40 a run at regular intervals), so a stalled
// sampler on a loaded machine shortens them rather than leaving one empty.
// Goroutines are judged less the open ext_proc streams (kvpick runs one per
// stream, and how many are open follows the load: an overloaded replica holds
// hundreds), so what is judged is what no request accounts for: measured at
// about 41 per replica, whatever the load. Medians shrug off single spikes;
// the tolerances cover what moves without a leak: 20 % or 10 goroutines
// (timers, connections to the engines coming and going), and for the heap
// goal, which follows the live heap after each GC and so what is in flight
// and the index's churn, 25 % or 4 MiB. A leak of one goroutine per 10,000
// requests, or of 100 bytes per request, exceeds these over a 10-minute run
// at 1,000 requests/s.
var (
	goroutineGrowth, goroutineFloor = 0.20, 10.0
	heapGrowth, heapFloor           = 0.25, 4.0 * (1 << 20)
)

// minGCs: the heap goal changes only when a collection ends, so with fewer
// collections than this from the second tenth to the end (a short run at a
// low rate: about one per 15 s at 100 requests/s) it is not judged, and the
// summary says so. A 10-minute run at 1,000 requests/s has hundreds.
const minGCs = 8

func gcsBetween(base, last []sample) float64 {
	if len(base) == 0 || len(last) == 0 {
		return 0
	}
	return last[len(last)-1].GCs - base[0].GCs
}

// verdict is what the soak concluded: a summary and the failed checks.
type verdict struct {
	text     string
	failures []string
}

func verdictOf(samples []sample, st testutil.LoadStats, idle []sample, d time.Duration) verdict {
	var v verdict
	var b strings.Builder
	fmt.Fprintf(&b, "%.0f s of load: %d requests sent (%.0f/s; %d arrivals found all %d workers busy and were not sent)\n",
		d.Seconds(), st.Sent, float64(st.Sent)/d.Seconds(), st.Dropped, *workers)
	fmt.Fprintf(&b, "statuses %v, transport errors %v\n", st.Status, st.Errors)
	fmt.Fprintf(&b, "TTFT at the client (a refusal or error counts as +Inf): p50 %s, p95 %s, p99 %s\n",
		ttftText(st.TTFTQuantile(0.5)), ttftText(st.TTFTQuantile(0.95)), ttftText(st.TTFTQuantile(0.99)))
	for status, n := range st.Status {
		if status != 200 && status != 429 && status != 503 {
			v.failures = append(v.failures, fmt.Sprintf("%d requests answered %d (only 200, 429 and 503 are expected)", n, status))
		}
	}
	if len(st.Errors) > 0 {
		v.failures = append(v.failures, fmt.Sprintf("transport errors: %v", st.Errors))
	}
	for _, s := range samples {
		if s.Err != "" {
			v.failures = append(v.failures, fmt.Sprintf("replica %d unreadable at %v: %s", s.Replica, s.At, s.Err))
		}
	}
	for r := range idle {
		v.check(&b, samples, r, d)
		s := idle[r]
		fmt.Fprintf(&b, "replica %d after the load: active work %v, open streams %v\n", r, s.Active, s.Streams)
		if s.Err != "" || s.Active != 0 || s.Streams != 0 {
			v.failures = append(v.failures, fmt.Sprintf("replica %d kept active work %v and %v open streams after the load (%s%s)",
				r, s.Active, s.Streams, s.Err, s.Left))
		}
	}
	v.text = b.String()
	return v
}

// ttftText prints a TTFT quantile, +Inf for a refusal.
func ttftText(d time.Duration) string {
	if d == math.MaxInt64 {
		return "+Inf"
	}
	return d.Round(100 * time.Microsecond).String()
}

// check compares replica r's second tenth with its last tenth.
func (v *verdict) check(b *strings.Builder, samples []sample, r int, d time.Duration) {
	base, last := tenths(samples, r, d)
	for _, m := range []struct {
		name          string
		get           func(sample) float64
		growth, floor float64
		gcs           bool // judged only over enough collections
	}{
		{"goroutines besides the streams", func(s sample) float64 { return s.Goroutines - s.Streams }, goroutineGrowth, goroutineFloor, false},
		{"heap goal bytes", func(s sample) float64 { return s.HeapGoal }, heapGrowth, heapFloor, true},
	} {
		if n := gcsBetween(base, last); m.gcs && len(base) > 0 && n < minGCs {
			fmt.Fprintf(b, "replica %d %s: not judged, %v collections from the second tenth on (fewer than %d: the run is too short)\n",
				r, m.name, n, minGCs)
			continue
		}
		b0, b1 := median(base, m.get), median(last, m.get)
		limit := max(b0*(1+m.growth), b0+m.floor)
		fmt.Fprintf(b, "replica %d %s: median %.0f in the second tenth (%d samples), %.0f in the last (%d; limit %.0f)\n",
			r, m.name, b0, len(base), b1, len(last), limit)
		if len(base) == 0 || len(last) == 0 {
			v.failures = append(v.failures, fmt.Sprintf("replica %d: too few samples to judge %s", r, m.name))
		} else if b1 > limit {
			v.failures = append(v.failures, fmt.Sprintf("replica %d %s grew: %.0f -> %.0f (limit %.0f)", r, m.name, b0, b1, limit))
		}
	}
}

// tenths returns replica r's samples of the second and the last tenth of the
// run, counted from the first sample at or after d/10 that follows two GCs.
func tenths(samples []sample, r int, d time.Duration) (second, last []sample) {
	mine := window(samples, r, 0, 1<<62)
	from := len(mine)
	for i, s := range mine {
		if s.At >= d/10 && s.GCs >= 2 {
			from = i
			break
		}
	}
	rest := mine[from:]
	n := len(rest) * 10 / 9 // the samples of the whole run, had the first tenth been sampled alike
	if n < 10 {
		return nil, nil
	}
	return rest[:n/10], rest[len(rest)-n/10:]
}

// window is replica r's readable samples taken in [from, to).
func window(samples []sample, r int, from, to time.Duration) []sample {
	var out []sample
	for _, s := range samples {
		if s.Replica == r && s.Err == "" && s.At >= from && s.At < to {
			out = append(out, s)
		}
	}
	return out
}

func median(ss []sample, get func(sample) float64) float64 {
	if len(ss) == 0 {
		return 0
	}
	vs := make([]float64, len(ss))
	for i, s := range ss {
		vs[i] = get(s)
	}
	sort.Float64s(vs)
	return vs[len(vs)/2]
}
