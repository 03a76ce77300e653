package testutil

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

// CompletionBody is a streamed completions request for model "m".
func CompletionBody(prompt string) []byte {
	return []byte(fmt.Sprintf(`{"model":"m","prompt":%q,"max_tokens":8,"stream":true}`, prompt))
}

// Prompt is words one-token words tagged by group's first letter (so groups
// share nothing), then a tail that makes each prompt distinct.
func Prompt(group string, words int, tail int) string {
	var b strings.Builder
	for i := 0; i < words; i++ {
		fmt.Fprintf(&b, " %s%03x", group[:1], i%4096)
	}
	fmt.Fprintf(&b, " tail%d", tail)
	return b.String()
}

// StreamBench drives b.N requests of about 8,000 approximate tokens (half a
// group prefix shared by every eighth request) through c as Envoy does, and
// reports p50/p99 of the time to route and of the latency the picker adds
// after the last body byte (decision-p50/p99).
func StreamBench(b *testing.B, c *envoyclient.Client) {
	ctx := context.Background()
	bodies := make([][]byte, 64)
	for i := range bodies {
		bodies[i] = CompletionBody(Prompt(string(rune('a'+i%8)), 4000, i) + Prompt("s", 4000, i))
	}
	sse := [][]byte{[]byte("data: {\"choices\":[{\"text\":\"x\"}]}\n\n"), []byte("data: [DONE]\n\n")}
	lat := make([]time.Duration, 0, b.N)
	added := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.SetBytes(int64(len(bodies[0])))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		st, res, err := c.Route(ctx, envoyclient.Request{Method: "POST", Path: "/v1/completions", Body: bodies[i%len(bodies)], ChunkSizes: []int{16384}})
		if err != nil || res.Status != 0 {
			b.Fatalf("route: %v %+v", err, res)
		}
		lat = append(lat, time.Since(start))
		added = append(added, res.DecisionLatency)
		if err := st.Respond(ctx, 200, "text/event-stream", res.Endpoints[0], sse); err != nil {
			b.Fatal(err)
		}
		st.Close()
	}
	b.StopTimer()
	ReportPercentiles(b, "", lat)
	ReportPercentiles(b, "decision-", added)
}

// ReportPercentiles adds p50 and p99 of per-iteration latencies to b's output.
func ReportPercentiles(b *testing.B, prefix string, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), prefix+"p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), prefix+"p99-µs")
}
