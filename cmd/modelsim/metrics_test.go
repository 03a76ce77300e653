package main

import (
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func TestVLLMMetrics(t *testing.T) {
	url, _ := startServer(t, "--model", "m", "--block-size", "8", "--num-gpu-blocks", "500", "--lora-adapters", "x",
		"--max-loras", "2")
	for range 2 {
		post(t, url+"/v1/completions", `{"model":"m","prompt":"one two three four five six seven eight nine ten eleven","max_tokens":2}`)
	}
	fams := scrape(t, url)
	for _, name := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
		"vllm:cache_config_info", "vllm:lora_requests_info", "vllm:prefix_cache_queries_total",
		"vllm:prefix_cache_hits_total", "vllm:time_to_first_token_seconds"} {
		f := fams[name]
		if f == nil || len(f.Metric) != 1 || label(f.Metric[0], "model_name") != "m" {
			t.Fatalf("%s missing or unlabelled: %v", name, f)
		}
	}
	cc := fams["vllm:cache_config_info"].Metric[0]
	if label(cc, "block_size") != "8" || label(cc, "num_gpu_blocks") != "500" {
		t.Fatalf("cache_config_info labels %v", cc.GetLabel())
	}
	if l := fams["vllm:lora_requests_info"].Metric[0]; label(l, "max_lora") != "2" || l.GetGauge().GetValue() < 1e9 {
		t.Fatalf("lora_requests_info %v", l)
	}
	q := fams["vllm:prefix_cache_queries_total"].Metric[0].GetCounter().GetValue()
	h := fams["vllm:prefix_cache_hits_total"].Metric[0].GetCounter().GetValue()
	if q == 0 || h == 0 || h >= q {
		t.Fatalf("prefix cache queries %v hits %v", q, h)
	}
	if n := fams["vllm:time_to_first_token_seconds"].Metric[0].GetHistogram().GetSampleCount(); n != 2 {
		t.Fatalf("ttft samples %d, want 2", n)
	}
}

func TestSGLangMetrics(t *testing.T) {
	url, _ := startServer(t, "--metrics-style", "sglang", "--block-size", "32")
	fams := scrape(t, url)
	for _, name := range []string{"sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage",
		"sglang:cache_config_info", "sglang:cache_hit_rate"} {
		if fams[name] == nil {
			t.Fatalf("%s missing", name)
		}
	}
	if fams["vllm:num_requests_running"] != nil {
		t.Fatal("vLLM names exported in sglang style")
	}
	if l := label(fams["sglang:cache_config_info"].Metric[0], "page_size"); l != "32" {
		t.Fatalf("page_size %q", l)
	}
}
