package main

import (
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	return scrapePath(t, url, "/metrics")
}

func scrapePath(t *testing.T, url, path string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + path)
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

// SGLang v0.5.12+ and trtllm-serve report capacity as plain gauges;
// trtllm-serve serves them at /prometheus/metrics and JSON at /metrics.
func TestCapacityGaugeStyles(t *testing.T) {
	cases := []struct{ style, path, page, pages string }{
		{"sglang-gauges", "/metrics", "sglang:page_size", "sglang:num_pages"},
		{"trtllm", "/prometheus/metrics", "trtllm_kv_cache_tokens_per_block", "trtllm_kv_cache_max_blocks"},
	}
	for _, tc := range cases {
		t.Run(tc.style, func(t *testing.T) {
			url, _ := startServer(t, "--metrics-style", tc.style, "--block-size", "32", "--num-gpu-blocks", "500")
			fams := scrapePath(t, url, tc.path)
			if fams[tc.page] == nil || fams[tc.page].Metric[0].GetGauge().GetValue() != 32 {
				t.Fatalf("%s = %v, want 32", tc.page, fams[tc.page])
			}
			if fams[tc.pages] == nil || fams[tc.pages].Metric[0].GetGauge().GetValue() != 500 {
				t.Fatalf("%s = %v, want 500", tc.pages, fams[tc.pages])
			}
			for name := range fams {
				if strings.HasSuffix(name, "cache_config_info") {
					t.Fatalf("%s exported in style %s", name, tc.style)
				}
			}
		})
	}
	url, _ := startServer(t, "--metrics-style", "trtllm")
	resp, data := get(t, url+"/metrics")
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" || !strings.HasPrefix(string(data), "[{") {
		t.Fatalf("trtllm /metrics: %s %s, want JSON iteration stats", ct, data)
	}
}

func TestOffsetPort(t *testing.T) {
	for _, tc := range []struct {
		in   string
		rank int
		want string
	}{
		{"tcp://*:5557", 2, "tcp://*:5559"}, {"tcp://127.0.0.1:5557", 0, "tcp://127.0.0.1:5557"},
		{"tcp://127.0.0.1:0", 3, "tcp://127.0.0.1:0"}, {"ipc:///tmp/kv", 1, "ipc:///tmp/kv"}, {"", 1, ""},
	} {
		if got := offsetPort(tc.in, tc.rank); got != tc.want {
			t.Errorf("offsetPort(%q, %d) = %q, want %q", tc.in, tc.rank, got, tc.want)
		}
	}
}

func TestStepClockCounters(t *testing.T) {
	url, _ := startServer(t, "--model", "m", "--block-size", "8", "--num-gpu-blocks", "500")
	for range 2 {
		post(t, url+"/v1/completions", `{"model":"m","prompt":"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen","max_tokens":3}`)
	}
	fams := scrape(t, url)
	value := func(name string) float64 {
		f := fams[name]
		if f == nil || len(f.Metric) != 1 {
			t.Fatalf("%s missing: %v", name, f)
		}
		return f.Metric[0].GetCounter().GetValue()
	}
	queries, hits := value("vllm:prefix_cache_queries_total"), value("vllm:prefix_cache_hits_total")
	if got := value("modelsim_prefill_tokens_total"); got != queries-hits || got == 0 {
		t.Fatalf("prefill tokens %v, want queries-hits = %v", got, queries-hits)
	}
	// Two requests of three tokens each: at least three steps, each with a modelled duration.
	if steps := value("modelsim_steps_total"); steps < 3 {
		t.Fatalf("steps %v, want at least 3", steps)
	}
	if value("modelsim_step_modelled_seconds_total") <= 0 {
		t.Fatal("no modelled step time")
	}
	if lost := value("modelsim_host_lost_seconds_total"); lost < 0 {
		t.Fatalf("lost %v", lost)
	}
}
