package extproc

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kvpick/kvpick/pkg/apierr"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

var metricsRun atomic.Int64

func TestMetricsCounted(t *testing.T) {
	// A mode label of its own per run, so the counters start at zero even with -count > 1.
	mode := fmt.Sprintf("metrics-test-%d", metricsRun.Add(1))
	r := newFakeRouter("10.9.9.9:8000")
	h := startHarness(t, r, Options{Mode: mode}, nil, nil)
	ctx := testCtx(t)
	st, _, err := h.client.Route(ctx, streamedReq(completion("metrics-model", "p")))
	if err != nil {
		t.Fatal(err)
	}
	if got := value(t, telemetry.ExtprocEndpointInflight.WithLabelValues("10.9.9.9:8000")); got != 1 {
		t.Fatalf("in-flight during the request = %v", got)
	}
	if err := st.Respond(ctx, 200, "text/event-stream", "", sseChunks); err != nil {
		t.Fatal(err)
	}
	st.Close()
	waitDone(t, r.allDecisions()[0])
	st, _, err = h.client.Route(ctx, streamedReq([]byte(`{"prompt":"x"}`)))
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	r.mu.Lock()
	r.err = apierr.Unavailable("all eligible endpoints are overloaded")
	r.mu.Unlock()
	st, res, err := h.client.Route(ctx, streamedReq(completion("metrics-model", "p")))
	if err != nil || res.Status != 503 {
		t.Fatalf("want a 503 rejection, got %v %+v", err, res)
	}
	st.Close()
	checks := []struct {
		name string
		got  float64
		want float64
	}{
		{"routed", value(t, telemetry.ExtprocRequests.WithLabelValues("metrics-model", mode, outcomeRouted, "200")), 1},
		{"rejected before parsing", value(t, telemetry.ExtprocRequests.WithLabelValues("", mode, outcomeRejected, "400")), 1},
		{"rejected keeps its model", value(t, telemetry.ExtprocRequests.WithLabelValues("metrics-model", mode, outcomeRejected, "503")), 1},
		{"in-flight after", value(t, telemetry.ExtprocEndpointInflight.WithLabelValues("10.9.9.9:8000")), 0},
		{"decisions observed", float64(histCount(t, telemetry.ExtprocDecisionDuration.WithLabelValues(mode))), 2}, // the 400 never reached Route
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// A routed request whose stream ends before its response does (the endpoint
// died mid-response, the gateway gave up) is counted against its endpoint.
func TestUnfinishedCountedPerEndpoint(t *testing.T) {
	ep := fmt.Sprintf("10.9.9.%d:8000", metricsRun.Add(1))
	r := newFakeRouter(ep)
	h := startHarness(t, r, Options{}, nil, nil)
	ctx := testCtx(t)
	st, _, err := h.client.Route(ctx, streamedReq(completion("m", "p")))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SendResponseHeaders(200, "text/event-stream", ep, false); err != nil {
		t.Fatal(err)
	}
	st.Abort()
	waitDone(t, r.allDecisions()[0])
	if got := value(t, telemetry.ExtprocEndpointUnfinished.WithLabelValues(ep, outcomeCanceled)); got != 1 {
		t.Fatalf("unfinished canceled = %v, want 1", got)
	}
}

// value reads a counter or gauge.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	if d.Counter != nil {
		return d.Counter.GetValue()
	}
	return d.Gauge.GetValue()
}

func histCount(t *testing.T, o prometheus.Observer) uint64 {
	t.Helper()
	var d dto.Metric
	if err := o.(prometheus.Metric).Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.Histogram.GetSampleCount()
}

func TestBoundedLabels(t *testing.T) {
	b := boundedLabels{max: 2}
	got := []string{b.get("a"), b.get("b"), b.get("c"), b.get("a")}
	if want := []string{"a", "b", "other", "a"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("labels %v, want %v", got, want)
	}
}

func TestDecisionLogLineHasNoPrompt(t *testing.T) {
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	ms := newMemStream(reqHeaders("/v1/completions", false), reqBody(string(completion("m", "secret prompt text")), true))
	if err := NewServer(newFakeRouter("10.0.0.1:8000"), Options{Log: log}).Process(ms); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `"routed"`) || strings.Contains(lines[0], "secret") {
		t.Fatalf("log lines = %q", lines)
	}
}
