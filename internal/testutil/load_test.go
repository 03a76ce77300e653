package testutil

import (
	"math"
	"testing"
	"time"
)

func TestTTFTQuantile(t *testing.T) {
	inf := time.Duration(math.MaxInt64)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, c := range []struct {
		name string
		ttft []time.Duration
		q    float64
		want time.Duration
	}{
		{"nothing sent", nil, 0.95, 0},
		{"one", []time.Duration{ms(7)}, 0.5, ms(7)},
		{"median of unsorted", []time.Duration{ms(30), ms(10), ms(20)}, 0.5, ms(20)},
		{"p95 of 20 is the 19th", seq(20), 0.95, ms(19)},
		{"p99 of 20 is the last", seq(20), 0.99, ms(20)},
		{"a refusal in the tail", append(seq(19), inf), 0.99, inf},
		{"a refusal below p95 of 20", append(seq(19), inf), 0.95, ms(19)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := (LoadStats{TTFT: c.ttft}).TTFTQuantile(c.q); got != c.want {
				t.Fatalf("TTFTQuantile(%v) = %v, want %v", c.q, got, c.want)
			}
		})
	}
}

// seq is 1..n milliseconds.
func seq(n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(i+1) * time.Millisecond
	}
	return out
}
