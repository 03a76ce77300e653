package telemetry

import (
	"math"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

func TestPoolCollector(t *testing.T) {
	tests := []struct {
		name string
		pods []PodLoad
		want map[string]float64 // family/pod -> value; absent families must not be exported
	}{
		{"empty pool", nil, map[string]float64{"inference_pool_ready_pods/": 0}},
		{"averages over ready pods only", []PodLoad{
			{Pod: "a", Ready: true, Waiting: 4, Running: 2, KVUsage: 0.5},
			{Pod: "b", Ready: true, Waiting: 0, Running: 6, KVUsage: 0.25},
			{Pod: "c", Ready: false, Waiting: 9, Running: 9, KVUsage: 1},
		}, map[string]float64{
			"inference_pool_ready_pods/":                   2,
			"inference_pool_average_queue_size/":           2,
			"inference_pool_average_running_requests/":     4,
			"inference_pool_average_kv_cache_utilization/": 0.375,
			"inference_pool_per_pod_queue_size/a":          4,
			"inference_pool_per_pod_queue_size/b":          0,
			"inference_pool_per_pod_queue_size/c":          9,
		}},
		{"two ports of one pod add up", []PodLoad{
			{Pod: "a", Ready: true, Waiting: 1}, {Pod: "a", Ready: true, Waiting: 2},
		}, map[string]float64{
			"inference_pool_ready_pods/":                   2,
			"inference_pool_average_queue_size/":           1.5,
			"inference_pool_average_running_requests/":     0,
			"inference_pool_average_kv_cache_utilization/": 0,
			"inference_pool_per_pod_queue_size/a":          3,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			RegisterPool("test-pool", func() []PodLoad { return tt.pods })
			defer UnregisterPool("test-pool")
			got := gatherPool(t, "test-pool")
			if len(got) != len(tt.want) {
				t.Errorf("got %d series, want %d: %v", len(got), len(tt.want), got)
			}
			for k, v := range tt.want {
				if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-9 {
					t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
				}
			}
		})
	}
}

// gatherPool returns "family/model_server_pod" -> value for one pool name.
func gatherPool(t *testing.T, pool string) map[string]float64 {
	return gatherWhere(t, func(m *dto.Metric) (string, bool) {
		return label(m, "model_server_pod"), label(m, "name") == pool && m.Gauge != nil
	})
}

func TestCanonicalCode(t *testing.T) {
	for status, want := range map[int]string{400: "BadRequest", 404: "NotFound", 429: "ResourceExhausted",
		503: "ServiceUnavailable", 500: "Internal", 418: "Unknown"} {
		if got := CanonicalCode(status); got != want {
			t.Errorf("CanonicalCode(%d) = %q, want %q", status, got, want)
		}
	}
}

func TestCompatWorkerLoadAndQueue(t *testing.T) {
	CompatWorkerLoad("10.1.2.3:8000", 300, 7)
	if got := gaugeValue(t, dynPrefill.WithLabelValues("10.1.2.3:8000", "0", "decode")); got != 300 {
		t.Errorf("active prefill tokens = %v, want 300", got)
	}
	CompatForgetWorker("10.1.2.3:8000")
	if hasSeries(t, "dynamo_frontend_worker_active_decode_blocks", "worker_id", "10.1.2.3:8000") {
		t.Error("a decode-block series is left after forget")
	}
	before := gaugeValue(t, dynQueueISL.WithLabelValues("decode"))
	CompatQueueAdd(2, 900)
	CompatQueueAdd(-1, -400)
	if got := gaugeValue(t, dynQueueISL.WithLabelValues("decode")) - before; got != 500 {
		t.Errorf("queued isl tokens moved by %v, want 500", got)
	}
	CompatQueueAdd(-1, -500)
}

func gaugeValue(t *testing.T, g interface{ Write(*dto.Metric) error }) float64 {
	t.Helper()
	var d dto.Metric
	if err := g.Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetGauge().GetValue()
}

// hasSeries reports whether family has a series whose labelName is value.
func hasSeries(t *testing.T, family, labelName, value string) bool {
	_, ok := gatherWhere(t, func(m *dto.Metric) (string, bool) { return "", label(m, labelName) == value })[family+"/"]
	return ok
}
