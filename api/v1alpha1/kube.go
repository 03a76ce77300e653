package v1alpha1

import "time"

// Kubernetes configures Kubernetes mode: the InferencePool (or pool-less
// selector) controller that feeds the candidate set, leader election, and
// what pod labels and annotations mean. Unused in standalone (file) mode.
type Kubernetes struct {
	// EngineLabels are the pod labels naming the engine type, first present wins
	// (default llm-d's "llm-d.ai/engine-type", then the reference picker's older
	// "inference.networking.k8s.io/engine-type"). Values vllm, sglang,
	// trtllm/trtllm-serve, triton/triton-tensorrt-llm; none means vllm.
	EngineLabels []string `json:"engineLabels,omitempty"`
	// LoRAKey is the pod label (one adapter) or annotation (comma-separated
	// adapters) listing the LoRA adapters a pod serves (default "kvpick.io/lora-adapters").
	LoRAKey string `json:"loraKey"`
	// ModelsAnnotation lists the models a pod serves, comma-separated (default
	// "kvpick.io/models"); absent means any model.
	ModelsAnnotation string `json:"modelsAnnotation"`
	// KVEventsPortAnnotation gives a pod's KV-events ZMQ port (default
	// "kvpick.io/kv-events-port"); absent means kv.eventsPort.
	KVEventsPortAnnotation string `json:"kvEventsPortAnnotation"`
	// MetricsPortAnnotation gives a pod's metrics port (default
	// "kvpick.io/metrics-port"); absent means the target port itself.
	MetricsPortAnnotation string `json:"metricsPortAnnotation"`
	// WorkerIDAnnotation gives a pod's Dynamo worker instance id (default
	// "kvpick.io/dynamo-worker-id"); absent means the endpoint name.
	WorkerIDAnnotation string `json:"workerIdAnnotation"`
	// APIProbeInterval is how often the API server's reachability is checked
	// (default 5s). Shorter reports an outage sooner, at one more request per interval.
	APIProbeInterval Duration `json:"apiProbeInterval"`
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election (defaults
	// 15s, 10s, 2s, controller-runtime's). Shorter hands over sooner after a
	// leader dies, at more API writes and more risk of a leader losing its lease
	// during a brief API hiccup.
	LeaseDuration Duration `json:"leaseDuration"`
	RenewDeadline Duration `json:"renewDeadline"`
	RetryPeriod   Duration `json:"retryPeriod"`
}

// MaxTargetPorts is the most target ports an InferencePool may list (its CRD's limit).
const MaxTargetPorts = 8

func (k *Kubernetes) setDefaults() {
	if k.EngineLabels == nil {
		k.EngineLabels = []string{"llm-d.ai/engine-type", "inference.networking.k8s.io/engine-type"}
	}
	setStr(&k.LoRAKey, "kvpick.io/lora-adapters")
	setStr(&k.ModelsAnnotation, "kvpick.io/models")
	setStr(&k.KVEventsPortAnnotation, "kvpick.io/kv-events-port")
	setStr(&k.MetricsPortAnnotation, "kvpick.io/metrics-port")
	setStr(&k.WorkerIDAnnotation, "kvpick.io/dynamo-worker-id")
	setDur(&k.APIProbeInterval, 5*time.Second)
	setDur(&k.LeaseDuration, 15*time.Second)
	setDur(&k.RenewDeadline, 10*time.Second)
	setDur(&k.RetryPeriod, 2*time.Second)
}

func (k *Kubernetes) validate(p *problems) {
	for _, f := range []struct {
		path string
		d    Duration
	}{{"apiProbeInterval", k.APIProbeInterval}, {"leaseDuration", k.LeaseDuration},
		{"renewDeadline", k.RenewDeadline}, {"retryPeriod", k.RetryPeriod}} {
		if f.d.Duration <= 0 {
			p.add("kubernetes."+f.path, "must be positive")
		}
	}
	if k.RenewDeadline.Duration >= k.LeaseDuration.Duration {
		p.add("kubernetes.renewDeadline", "must be shorter than leaseDuration (%s)", k.LeaseDuration)
	}
	if k.RetryPeriod.Duration >= k.RenewDeadline.Duration {
		p.add("kubernetes.retryPeriod", "must be shorter than renewDeadline (%s)", k.RenewDeadline)
	}
}
