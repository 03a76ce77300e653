package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Kubernetes mode (pkg/controller).
var (
	// KubeAPIReachable is 1 while the API server answers, 0 while it does not
	// (the picker then keeps serving the last known endpoints).
	KubeAPIReachable = must(prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "kube", Name: "api_reachable",
		Help: "1 when the Kubernetes API server answered the last probe; 0 means endpoints are the last known.",
	}))
	// KubeLeader is 1 on the replica holding the leader-election lease (always 1 without leader election).
	KubeLeader = must(prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "kube", Name: "leader",
		Help: "1 when this replica is the leader (or leader election is off).",
	}))
	// KubeEndpoints is the number of endpoints the controller last wrote.
	KubeEndpoints = must(prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "kube", Name: "endpoints",
		Help: "Endpoints (pod IP and target port) the Kubernetes controller last wrote to the candidate set.",
	}))
	// KubeReconciles counts reconciles by controller (endpoints, objectives) and result (ok, error).
	KubeReconciles = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "kube", Name: "reconciles_total",
		Help: "Reconciles of the Kubernetes controllers, by controller and result.",
	}, []string{"controller", "result"}))
)
