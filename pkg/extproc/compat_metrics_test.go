package extproc

import (
	"fmt"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// TestCompatMetricsCounted drives a routed request through the real stream and
// checks that the reference picker's and Dynamo's names move with it.
func TestCompatMetricsCounted(t *testing.T) {
	model := fmt.Sprintf("compat-model-%d", metricsRun.Add(1)) // fresh series per run
	r := newFakeRouter("10.9.9.8:8000")
	h := startHarness(t, r, Options{Mode: "compat-test"}, nil, nil)
	ctx := testCtx(t)
	st, _, err := h.client.Route(ctx, streamedReq(completion(model, "p")))
	if err != nil {
		t.Fatal(err)
	}
	mm := map[string]string{"model_name": model, "target_model_name": model}
	if got := gathered(t, "inference_objective_running_requests", map[string]string{"model_name": model}); got != 1 {
		t.Fatalf("running during the request = %v, want 1", got)
	}
	if err := st.Respond(ctx, 200, "text/event-stream", "", sseChunks); err != nil {
		t.Fatal(err)
	}
	st.Close()
	waitDone(t, r.allDecisions()[0])
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"inference_objective_request_total", map[string]string{"model_name": model, "target_model_name": model, "priority": "0"}, 1},
		{"inference_objective_running_requests", map[string]string{"model_name": model}, 0},
		{"inference_objective_request_duration_seconds", mm, 1},
		{"inference_objective_request_ttft_seconds", mm, 1},
		{"inference_objective_input_tokens", mm, 1},
		{"inference_objective_output_tokens", mm, 1},
		{"dynamo_frontend_time_to_first_token_seconds", map[string]string{"model": model}, 1},
	}
	for _, c := range checks {
		if got := gathered(t, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := gatheredSum(t, "inference_objective_input_tokens", mm); got != 5 {
		t.Errorf("input tokens sum = %v, want 5 (usage.prompt_tokens)", got)
	}
}

// gathered is the value of a counter or gauge, or the sample count of a
// histogram, of the series of name with exactly labels; -1 when absent.
func gathered(t *testing.T, name string, labels map[string]string) float64 {
	m := findSeries(t, name, labels)
	switch {
	case m == nil:
		return -1
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return -1
}

func gatheredSum(t *testing.T, name string, labels map[string]string) float64 {
	if m := findSeries(t, name, labels); m != nil && m.Histogram != nil {
		return m.Histogram.GetSampleSum()
	}
	return -1
}

func findSeries(t *testing.T, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	fams, err := telemetry.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelsEqual(m.GetLabel(), labels) {
				return m
			}
		}
	}
	return nil
}

func labelsEqual(got []*dto.LabelPair, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, l := range got {
		if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
			return false
		}
	}
	return true
}
