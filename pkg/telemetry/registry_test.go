package telemetry

import "testing"

func TestMetricNames(t *testing.T) {
	names := MetricNames()
	for name, hist := range map[string]bool{
		"kvpick_requests_total":                              false, // a CounterVec with no series yet
		"kvpick_decision_duration_seconds":                   true,
		"inference_pool_per_pod_queue_size":                  false, // a custom collector
		"inference_extension_scheduler_e2e_duration_seconds": true,
		"dynamo_frontend_worker_active_decode_blocks":        false,
		"process_resident_memory_bytes":                      false,
	} {
		got, ok := names[name]
		if !ok {
			t.Errorf("%s missing from MetricNames", name)
			continue
		}
		if name != "process_resident_memory_bytes" && got != hist {
			t.Errorf("%s histogram = %v, want %v", name, got, hist)
		}
	}
	if _, ok := names["kvpick_no_such_metric"]; ok {
		t.Error("an unknown name is reported")
	}
}
