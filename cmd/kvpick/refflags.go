package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// refFlags are the reference endpoint picker's (GIE / llm-d cmd/epp) flags
// kvpick implements, with the same names and meaning, so that picker's chart
// and docs work unchanged.
type refFlags struct {
	poolName, poolNamespace, poolGroup string
	endpointSelector                   string
	targetPorts                        portList
	grpcPort, grpcHealthPort           int
	metricsPort                        int
	secureServing                      bool
	certPath                           string
	enableCertReload                   bool
	leaderElection                     bool
	metricsAuth                        bool
	stalenessThreshold                 time.Duration
	refreshInterval                    time.Duration
	metricsPath                        string
	configFile, configText             string
	kubeconfig                         string
	ignored                            map[string]bool // reference flags given that kvpick ignores
	healthPortSet                      bool
	enablePprof                        bool
}

// DefaultGRPCHealthPort is the reference picker's gRPC health port, used in Kubernetes mode.
const DefaultGRPCHealthPort = 9003

// Reference-picker flags kvpick accepts and ignores (with a warning naming
// them), checked against gateway-api-inference-extension v1.5.0
// pkg/epp/server/options.go and its logging options. Bool flags must stay
// bool so "--tracing" alone parses.
var (
	ignoredBoolFlags = []string{"disable-endpoint-subset-filter", "model-server-metrics-https-insecure-skip-verify",
		"tracing", "health-checking", "zap-devel"}
	ignoredValueFlags = []string{"model-server-metrics-scheme", "model-server-metrics-port",
		"refresh-prometheus-metrics-interval", "total-queued-requests-metric", "total-running-requests-metric",
		"kv-cache-usage-percentage-metric", "lora-info-metric", "cache-info-metric",
		"zap-encoder", "zap-log-level", "zap-stacktrace-level", "zap-time-encoding"}
)

func bindRefFlags(fs *flag.FlagSet) *refFlags {
	r := &refFlags{ignored: map[string]bool{}}
	fs.StringVar(&r.poolName, "pool-name", "", "InferencePool to serve (Kubernetes mode): its selector and target ports give the endpoints")
	fs.StringVar(&r.poolNamespace, "pool-namespace", "", "namespace of the InferencePool (default: $NAMESPACE, else \"default\")")
	fs.StringVar(&r.poolGroup, "pool-group", "inference.networking.k8s.io", "API group of the InferencePool (only inference.networking.k8s.io/v1)")
	fs.StringVar(&r.endpointSelector, "endpoint-selector", "", "pool-less Kubernetes mode: pod selector, key=value pairs joined by commas (e.g. app=vllm,env=prod)")
	fs.Var(&r.targetPorts, "endpoint-target-ports", "pool-less Kubernetes mode: model-server ports, comma-separated (e.g. 8000,8001; at most 8)")
	fs.IntVar(&r.grpcPort, "grpc-port", 0, "ext_proc gRPC port (same as --grpc-addr :PORT; default 9002)")
	fs.IntVar(&r.grpcHealthPort, "grpc-health-port", 0, fmt.Sprintf("serve the gRPC health service (liveness, readiness, ext_proc) on its own port; default %d in Kubernetes mode, off in standalone (health is always on the ext_proc port too)", DefaultGRPCHealthPort))
	fs.IntVar(&r.metricsPort, "metrics-port", 0, "metrics and health HTTP port (same as --metrics-addr :PORT; default 9090)")
	fs.BoolVar(&r.secureServing, "secure-serving", true, "serve ext_proc over TLS (false is --plaintext)")
	fs.StringVar(&r.certPath, "cert-path", "", "directory holding tls.crt and tls.key for secure serving (default: a self-signed certificate)")
	fs.BoolVar(&r.enableCertReload, "enable-cert-reload", false, "reload the certificate in --cert-path when it changes (kvpick always does)")
	fs.BoolVar(&r.leaderElection, "ha-enable-leader-election", false, "Kubernetes mode: elect one leader per pool with a Lease; only the leader reports ready")
	fs.BoolVar(&r.metricsAuth, "metrics-endpoint-auth", true, "Kubernetes mode: /metrics requires a bearer token allowed by TokenReview and SubjectAccessReview (get on the /metrics non-resource URL)")
	fs.DurationVar(&r.stalenessThreshold, "metrics-staleness-threshold", 0, "distrust an endpoint's scraped metrics older than this (config: scrape.staleAfter)")
	fs.DurationVar(&r.refreshInterval, "refresh-metrics-interval", 0, "interval between scrapes of an endpoint's metrics (config: scrape.interval)")
	fs.StringVar(&r.metricsPath, "model-server-metrics-path", "", "path of the model servers' metrics page (config: scrape.path)")
	fs.StringVar(&r.configFile, "config-file", "", "kvpick's own YAML configuration file (same as --config; NOT the reference picker's EndpointPickerConfig)")
	fs.StringVar(&r.configText, "config-text", "", "kvpick's own YAML configuration as text, instead of a file (NOT the reference picker's EndpointPickerConfig)")
	fs.BoolVar(&r.enablePprof, "enable-pprof", false, "serve Go's profiles at /debug/pprof/ on the metrics address, behind the same auth as /metrics (the reference picker defaults it on; kvpick off: a profiler is not exposed unasked)")
	fs.StringVar(&r.kubeconfig, "kubeconfig", "", "Kubernetes mode: kubeconfig file (default: $KUBECONFIG, in-cluster, then ~/.kube/config)")
	for _, name := range ignoredBoolFlags {
		fs.Var(ignoredBool{r, name}, name, "reference-picker flag, accepted and ignored by kvpick (warns)")
	}
	for _, name := range ignoredValueFlags {
		fs.Var(ignoredValue{r, name}, name, "reference-picker flag, accepted and ignored by kvpick (warns)")
	}
	return r
}

// kubeMode reports whether the endpoints come from Kubernetes.
func (r *refFlags) kubeMode() bool { return r.poolName != "" || r.endpointSelector != "" }

// namespace resolves the pool namespace as the reference picker does.
func (r *refFlags) namespace() string {
	if r.poolNamespace != "" {
		return r.poolNamespace
	}
	if ns := os.Getenv("NAMESPACE"); ns != "" {
		return ns
	}
	return "default"
}

// warning names the ignored reference flags that were given, "" when none.
func (r *refFlags) warning() string {
	if len(r.ignored) == 0 {
		return ""
	}
	names := make([]string, 0, len(r.ignored))
	for n := range r.ignored {
		names = append(names, "--"+n)
	}
	sort.Strings(names)
	return "ignoring reference-picker flags kvpick does not implement: " + strings.Join(names, ", ")
}

// portList accumulates comma-separated and repeated --endpoint-target-ports.
type portList struct{ raw []string }

func (p *portList) String() string     { return strings.Join(p.raw, ",") }
func (p *portList) Set(v string) error { p.raw = append(p.raw, v); return nil }

type ignoredValue struct {
	r    *refFlags
	name string
}

func (v ignoredValue) String() string   { return "" }
func (v ignoredValue) Set(string) error { v.r.ignored[v.name] = true; return nil }
func (v ignoredValue) IsBoolFlag() bool { return false }

type ignoredBool ignoredValue

func (v ignoredBool) String() string   { return "" }
func (v ignoredBool) IsBoolFlag() bool { return true }
func (v ignoredBool) Set(s string) error {
	if _, err := strconv.ParseBool(s); err != nil {
		return fmt.Errorf("not a boolean: %q", s)
	}
	v.r.ignored[v.name] = true
	return nil
}
