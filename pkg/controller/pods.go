package controller

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/endpoints"
)

// engineAliases maps engine-type label values to kvpick's engine names
// (llm-d documents vllm, sglang, trtllm-serve and triton-tensorrt-llm).
var engineAliases = map[string]string{
	"vllm": "vllm", "sglang": "sglang",
	"trtllm": "trtllm", "trtllm-serve": "trtllm",
	"triton": "triton", "triton-tensorrt-llm": "triton",
}

// Eligible reports whether a pod may receive traffic: it has an IP, is not
// being deleted, is Running and its Ready condition is true.
func Eligible(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.PodIP == "" || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// PodEndpoints returns one endpoint per target port of an eligible pod, nil
// otherwise. With several ports each is a data-parallel rank (its index), and
// a KV-events port annotation is the base port of rank 0.
func PodEndpoints(p *corev1.Pod, ports []int, k *v1.Kubernetes) []endpoints.Endpoint {
	if !Eligible(p) {
		return nil
	}
	out := make([]endpoints.Endpoint, 0, len(ports))
	for rank, port := range ports {
		e := endpoints.Endpoint{Name: p.Name, Address: p.Status.PodIP, Port: port, Labels: maps.Clone(p.Labels),
			Engine: engine(p.Labels, k.EngineLabels), Models: list(p.Annotations[k.ModelsAnnotation]),
			LoRAAdapters: lora(p, k.LoRAKey), WorkerID: endpoints.WorkerID(p.Annotations[k.WorkerIDAnnotation]),
			MetricsPort: portAnnotation(p, k.MetricsPortAnnotation)}
		if len(ports) > 1 {
			e.Name = p.Name + ":" + strconv.Itoa(port)
			e.DPRank = &rank
		}
		if kp := portAnnotation(p, k.KVEventsPortAnnotation); kp > 0 {
			e.KVEvents = "tcp://" + e.Address + ":" + strconv.Itoa(kp+rank)
		}
		out = append(out, e)
	}
	return out
}

func engine(labels map[string]string, keys []string) string {
	for _, k := range keys {
		if v, ok := labels[k]; ok {
			return engineAliases[strings.ToLower(v)] // unknown: "" (vllm)
		}
	}
	return ""
}

// lora reads the adapters from the annotation (a list) or the label (one name).
func lora(p *corev1.Pod, key string) []string {
	if v, ok := p.Annotations[key]; ok {
		return list(v)
	}
	return list(p.Labels[key])
}

// portAnnotation returns the annotation's port, 0 when absent or invalid.
func portAnnotation(p *corev1.Pod, key string) int {
	n, err := strconv.Atoi(strings.TrimSpace(p.Annotations[key]))
	if err != nil || n < 1 || n > 65535 {
		return 0
	}
	return n
}

func list(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// AnnotationErrors names the pod's port annotations that are present but not
// a port number; such an annotation is ignored (the default applies).
func AnnotationErrors(p *corev1.Pod, k *v1.Kubernetes) error {
	var errs []error
	for _, key := range []string{k.KVEventsPortAnnotation, k.MetricsPortAnnotation} {
		if v, ok := p.Annotations[key]; ok && portAnnotation(p, key) == 0 {
			errs = append(errs, fmt.Errorf("pod %s/%s: annotation %s=%q is not a port (1-65535), ignored", p.Namespace, p.Name, key, v))
		}
	}
	return errors.Join(errs...)
}
