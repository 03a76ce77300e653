package chart

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

// objects indexes rendered objects by "Kind/name".
type objects map[string]*unstructured.Unstructured

func index(t *testing.T, list []*unstructured.Unstructured) objects {
	t.Helper()
	m := objects{}
	for _, o := range list {
		key := o.GetKind() + "/" + o.GetName()
		if _, dup := m[key]; dup {
			t.Errorf("rendered twice: %s", key)
		}
		m[key] = o
	}
	return m
}

func (m objects) get(t *testing.T, key string) *unstructured.Unstructured {
	t.Helper()
	o, ok := m[key]
	if !ok {
		t.Fatalf("%s not rendered (have %v)", key, m.keys())
	}
	return o
}

func (m objects) keys() []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// str reads a string at path; a missing field is "".
func str(o *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
	switch v := s.(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// container returns the picker container of the Deployment.
func container(t *testing.T, m objects) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(m.get(t, "Deployment/"+release+"-epp").Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("%d containers, want 1", len(cs))
	}
	return cs[0].(map[string]any)
}

func args(t *testing.T, m objects) []string {
	var out []string
	for _, a := range container(t, m)["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}

func roleRules(t *testing.T, m objects) string {
	b, _ := json.Marshal(m.get(t, "Role/"+release+"-epp").Object["rules"])
	return string(b)
}

func TestRenderDefaults(t *testing.T) {
	m := index(t, render(t, "default.yaml"))
	name := release + "-epp"
	for _, key := range []string{"Deployment/" + name, "Service/" + name, "ServiceAccount/" + name, "Role/" + name,
		"RoleBinding/" + name, "ConfigMap/" + name, "ConfigMap/" + name + "-dashboard", "InferencePool/" + release,
		"PodDisruptionBudget/" + name, "ClusterRole/" + release + "-" + namespace + "-epp-auth"} {
		m.get(t, key)
	}
	for _, absent := range []string{"HTTPRoute/" + release, "ServiceMonitor/" + name + "-monitor", "Gateway/inference-gateway"} {
		if _, ok := m[absent]; ok {
			t.Errorf("%s rendered with default values", absent)
		}
	}
	a := args(t, m)
	for _, want := range []string{"--pool-name=" + release, "--pool-namespace=" + namespace, "--pool-group=inference.networking.k8s.io",
		"--grpc-port=9002", "--grpc-health-port=9003", "--metrics-port=9090", "--config-file=/config/kvpick.yaml", "--v=1"} {
		if !slices.Contains(a, want) {
			t.Errorf("args %v lack %s", a, want)
		}
	}
	for _, not := range []string{"--ha-enable-leader-election", "--metrics-endpoint-auth=false", "--secure-serving=false"} {
		if slices.Contains(a, not) {
			t.Errorf("args %v contain %s with default values", a, not)
		}
	}
	checkDeployment(t, m)
	checkPool(t, m, `{"app":"vllm-llama3-8b"}`, `[{"number":8000}]`, "9002", "FailOpen", "http")
	if r := roleRules(t, m); !contains(r, `"pods"`, `"inferencepools"`, `"inferenceobjectives"`) || contains(r, "leases") {
		t.Errorf("role rules %s: want pods, inferencepools, inferenceobjectives and no leases", r)
	}
	if got := strings.TrimSpace(str(m.get(t, "ConfigMap/"+name), "data", "kvpick.yaml")); got != "{}" {
		t.Errorf("default picker config = %q, want {} (kvpick's own defaults)", got)
	}
	checkDashboard(t, m.get(t, "ConfigMap/"+name+"-dashboard"))
}

func checkDeployment(t *testing.T, m objects) {
	t.Helper()
	c := container(t, m)
	d := &unstructured.Unstructured{Object: c}
	for path, want := range map[string]string{
		"livenessProbe.grpc.service":               "liveness",
		"readinessProbe.grpc.service":              "readiness",
		"livenessProbe.grpc.port":                  "9003",
		"securityContext.readOnlyRootFilesystem":   "true",
		"securityContext.allowPrivilegeEscalation": "false",
		"securityContext.runAsNonRoot":             "true",
		"resources.requests.cpu":                   "2",
		"resources.limits.memory":                  "4Gi",
	} {
		if got := str(d, strings.Split(path, ".")...); got != want {
			t.Errorf("container %s = %q, want %q", path, got, want)
		}
	}
	dep := m.get(t, "Deployment/"+release+"-epp")
	if got := str(dep, "spec", "template", "spec", "securityContext", "runAsNonRoot"); got != "true" {
		t.Errorf("pod runAsNonRoot = %q", got)
	}
	svc := m.get(t, "Service/"+release+"-epp")
	if got := str(svc, "spec", "ports"); !contains(got, `"name":"grpc-ext-proc"`, `"name":"grpc-health"`, `"name":"http-metrics"`) {
		t.Errorf("service ports %s lack grpc, health or metrics", got)
	}
}

func checkPool(t *testing.T, m objects, labels, ports, epPort, failure, proto string) {
	t.Helper()
	p := m.get(t, "InferencePool/"+release)
	for _, c := range []struct{ got, want string }{
		{str(p, "apiVersion"), "inference.networking.k8s.io/v1"},
		{str(p, "spec", "selector", "matchLabels"), labels},
		{str(p, "spec", "targetPorts"), ports},
		{str(p, "spec", "endpointPickerRef", "name"), release + "-epp"}, // the Service
		{str(p, "spec", "endpointPickerRef", "port", "number"), epPort},
		{str(p, "spec", "endpointPickerRef", "failureMode"), failure},
		{str(p, "spec", "appProtocol"), proto},
	} {
		if c.got != c.want {
			t.Errorf("InferencePool: got %s, want %s", c.got, c.want)
		}
	}
}

func checkDashboard(t *testing.T, cm *unstructured.Unstructured) {
	t.Helper()
	if cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("dashboard labels %v lack grafana_dashboard", cm.GetLabels())
	}
	want, err := os.ReadFile("../../config/dashboards/kvpick.json")
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal([]byte(str(cm, "data", "kvpick.json")), &a); err != nil {
		t.Fatalf("dashboard in the ConfigMap is not JSON: %v", err)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("the ConfigMap's dashboard differs from config/dashboards/kvpick.json")
	}
}

func TestRenderAllOptions(t *testing.T) {
	m := index(t, render(t, "full.yaml"))
	a := args(t, m)
	for _, want := range []string{"--ha-enable-leader-election", "--metrics-endpoint-auth=false", "--secure-serving=false",
		"--v=2", "--refresh-metrics-interval=100ms", "--grpc-port=9100", "--grpc-health-port=9101", "--metrics-port=9190"} {
		if !slices.Contains(a, want) {
			t.Errorf("args %v lack %s", a, want)
		}
	}
	if got := container(t, m)["image"]; got != "registry.example.com/kvpick:v9.9.9" {
		t.Errorf("image = %v", got)
	}
	checkPool(t, m, `{"app":"sglang","tier":"gpu"}`, `[{"number":8000},{"number":8001}]`, "9100", "FailClose", "kubernetes.io/h2c")
	if r := roleRules(t, m); !contains(r, `"leases"`) {
		t.Errorf("role rules %s lack leases with 2 replicas", r)
	}
	if _, ok := m["ClusterRole/"+release+"-"+namespace+"-epp-auth"]; ok {
		t.Error("review RBAC rendered with metrics auth off")
	}
	route := m.get(t, "HTTPRoute/"+release)
	for _, c := range []struct{ got, want string }{
		{str(route, "spec", "parentRefs"), `[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"llm-gateway"}]`},
		{str(route, "spec", "rules"), `[{"backendRefs":[{"group":"inference.networking.k8s.io","kind":"InferencePool","name":"llama"}],` +
			`"matches":[{"headers":[{"name":"X-Gateway-Base-Model-Name","type":"Exact","value":"meta-llama/Llama-3.1-8B-Instruct"}],` +
			`"path":{"type":"PathPrefix","value":"/"}}],"timeouts":{"request":"600s"}}]`},
		{str(m.get(t, "Gateway/llm-gateway"), "spec", "listeners"), `[{"name":"http","port":8080,"protocol":"HTTP"}]`},
		{str(m.get(t, "GatewayClass/envoy-gateway-test"), "spec", "controllerName"), "gateway.envoyproxy.io/gatewayclass-controller"},
		{str(m.get(t, "PodDisruptionBudget/"+release+"-epp"), "spec", "minAvailable"), "1"},
		{str(m.get(t, "InferenceObjective/batch"), "spec"), `{"poolRef":{"group":"inference.networking.k8s.io","kind":"InferencePool","name":"llama"},"priority":-1}`},
	} {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
	}
	sm := m.get(t, "ServiceMonitor/"+release+"-epp-monitor")
	if got := str(sm, "spec", "endpoints"); !contains(got, `"port":"http-metrics"`, `"interval":"5s"`) || contains(got, "authorization") {
		t.Errorf("ServiceMonitor endpoints %s", got)
	}
	if sm.GetLabels()["release"] != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor labels %v lack the extra label", sm.GetLabels())
	}
	cfg, err := v1.Parse([]byte(str(m.get(t, "ConfigMap/"+release+"-epp"), "data", "kvpick.yaml")))
	if err != nil {
		t.Fatalf("the chart's picker config is not kvpick's format: %v", err)
	}
	if cfg.Router.Mode != "kv" || cfg.Objectives["critical"] != 10 {
		t.Errorf("picker config lost values: mode %q objectives %v", cfg.Router.Mode, cfg.Objectives)
	}
}

func TestRenderMetricsAuth(t *testing.T) {
	m := index(t, render(t, "auth.yaml"))
	prefix := release + "-" + namespace + "-epp"
	if r := str(m.get(t, "ClusterRole/"+prefix+"-auth"), "rules"); !contains(r, "tokenreviews", "subjectaccessreviews", `"create"`) {
		t.Errorf("auth rules %s", r)
	}
	if r := str(m.get(t, "ClusterRole/"+prefix+"-metrics-reader"), "rules"); r != `[{"nonResourceURLs":["/metrics"],"verbs":["get"]}]` {
		t.Errorf("metrics reader rules %s", r)
	}
	sec := m.get(t, "Secret/kvpick-sa-metrics-reader-secret")
	if str(sec, "type") != "kubernetes.io/service-account-token" ||
		sec.GetAnnotations()["kubernetes.io/service-account.name"] != release+"-epp-metrics-reader" {
		t.Errorf("token secret %v", sec.Object)
	}
	m.get(t, "ServiceAccount/"+release+"-epp-metrics-reader")
	if got := str(m.get(t, "ServiceMonitor/"+release+"-epp-monitor"), "spec", "endpoints"); !contains(got,
		`"authorization":{"credentials":{"key":"token","name":"kvpick-sa-metrics-reader-secret"}}`) {
		t.Errorf("ServiceMonitor endpoints %s lack the token", got)
	}
}

func contains(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
