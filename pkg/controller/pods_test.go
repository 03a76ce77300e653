package controller

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

func kube() *v1.Kubernetes {
	c := v1.Default()
	return &c.Kubernetes
}

type podOpt func(*corev1.Pod)

func pod(name, ip string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": "m"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func notReady(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }
func deleting(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }
func pending(p *corev1.Pod)  { p.Status.Phase = corev1.PodPending }
func noIP(p *corev1.Pod)     { p.Status.PodIP = "" }
func label(k, v string) podOpt {
	return func(p *corev1.Pod) { p.Labels[k] = v }
}
func annot(k, v string) podOpt {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}

func TestEligible(t *testing.T) {
	cases := []struct {
		name string
		p    *corev1.Pod
		want bool
	}{
		{"ready", pod("a", "10.0.0.1"), true},
		{"not ready", pod("a", "10.0.0.1", notReady), false},
		{"terminating", pod("a", "10.0.0.1", deleting), false},
		{"pending", pod("a", "10.0.0.1", pending), false},
		{"no ip", pod("a", "10.0.0.1", noIP), false},
		{"no ready condition", func() *corev1.Pod { p := pod("a", "10.0.0.1"); p.Status.Conditions = nil; return p }(), false},
	}
	for _, c := range cases {
		if got := Eligible(c.p); got != c.want {
			t.Errorf("%s: Eligible = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPodEndpoints(t *testing.T) {
	k := kube()
	p := pod("w0", "10.0.0.7", label("llm-d.ai/engine-type", "trtllm-serve"), label("kvpick.io/device", "gpu"),
		annot("kvpick.io/models", "m1, m2"), annot("kvpick.io/lora-adapters", "sql,chat"),
		annot("kvpick.io/kv-events-port", "5557"), annot("kvpick.io/metrics-port", "9400"),
		annot("kvpick.io/dynamo-worker-id", "7587889"))
	eps := PodEndpoints(p, []int{8000, 8001}, k)
	if len(eps) != 2 {
		t.Fatalf("got %d endpoints, want 2", len(eps))
	}
	for i, e := range eps {
		port := 8000 + i
		if e.Address != "10.0.0.7" || e.Port != port || e.Engine != "trtllm" || e.WorkerID != "7587889" || e.MetricsPort != 9400 {
			t.Errorf("endpoint %d: %+v", i, e)
		}
		if e.DPRank == nil || *e.DPRank != i {
			t.Errorf("endpoint %d: DPRank %v, want %d", i, e.DPRank, i)
		}
		if want := "tcp://10.0.0.7:" + []string{"5557", "5558"}[i]; e.KVEvents != want {
			t.Errorf("endpoint %d: KVEvents %q, want %q", i, e.KVEvents, want)
		}
		if strings.Join(e.Models, "|") != "m1|m2" || strings.Join(e.LoRAAdapters, "|") != "sql|chat" || e.Labels["kvpick.io/device"] != "gpu" {
			t.Errorf("endpoint %d: models %v lora %v labels %v", i, e.Models, e.LoRAAdapters, e.Labels)
		}
	}
	if eps[0].Name != "w0:8000" {
		t.Errorf("name %q, want w0:8000", eps[0].Name)
	}
	p.Labels["app"] = "changed" // the endpoint's labels are a copy, never the cache's map
	if eps[0].Labels["app"] != "m" {
		t.Error("endpoint labels alias the pod's")
	}
}

func TestPodEndpointsDefaults(t *testing.T) {
	k := kube()
	cases := []struct {
		name   string
		p      *corev1.Pod
		engine string
		lora   []string
	}{
		{"no labels", pod("a", "10.0.0.1"), "", nil},
		{"older engine label", pod("a", "10.0.0.1", label("inference.networking.k8s.io/engine-type", "sglang")), "sglang", nil},
		{"llm-d label wins", pod("a", "10.0.0.1", label("inference.networking.k8s.io/engine-type", "sglang"), label("llm-d.ai/engine-type", "vllm")), "vllm", nil},
		{"unknown engine is vllm", pod("a", "10.0.0.1", label("llm-d.ai/engine-type", "mystery")), "", nil},
		{"lora label", pod("a", "10.0.0.1", label("kvpick.io/lora-adapters", "sql")), "", []string{"sql"}},
	}
	for _, c := range cases {
		eps := PodEndpoints(c.p, []int{8000}, k)
		if len(eps) != 1 {
			t.Fatalf("%s: %d endpoints", c.name, len(eps))
		}
		e := eps[0]
		if e.Engine != c.engine || strings.Join(e.LoRAAdapters, ",") != strings.Join(c.lora, ",") {
			t.Errorf("%s: engine %q lora %v, want %q %v", c.name, e.Engine, e.LoRAAdapters, c.engine, c.lora)
		}
		if e.Name != "a" || e.DPRank != nil || e.KVEvents != "" || e.MetricsPort != 0 {
			t.Errorf("%s: single-port defaults wrong: %+v", c.name, e)
		}
	}
	if eps := PodEndpoints(pod("a", "10.0.0.1", notReady), []int{8000}, k); eps != nil {
		t.Errorf("not-ready pod gave %v", eps)
	}
}

func TestAnnotationErrors(t *testing.T) {
	k := kube()
	if err := AnnotationErrors(pod("a", "10.0.0.1", annot("kvpick.io/kv-events-port", "5557")), k); err != nil {
		t.Fatalf("valid annotation: %v", err)
	}
	p := pod("a", "10.0.0.1", annot("kvpick.io/kv-events-port", "zmq"), annot("kvpick.io/metrics-port", "70000"))
	err := AnnotationErrors(p, k)
	if err == nil || !strings.Contains(err.Error(), `kvpick.io/kv-events-port="zmq"`) || !strings.Contains(err.Error(), `kvpick.io/metrics-port="70000"`) {
		t.Fatalf("got %v, want both bad annotations named", err)
	}
	if e := PodEndpoints(p, []int{8000}, k)[0]; e.KVEvents != "" || e.MetricsPort != 0 {
		t.Fatalf("bad annotations were used: %+v", e)
	}
}
