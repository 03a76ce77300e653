package scrape

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func parseFile(t testing.TB, engine Engine, name string) (Sample, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Parse(engine, f)
}

func TestParseEngines(t *testing.T) {
	tests := []struct {
		name   string
		engine Engine
		file   string
		want   Sample
	}{
		{"vllm", EngineVLLM, "vllm.txt", Sample{
			Waiting: 3, Running: 7, KVUsage: 0.4213, BlockSize: 16, TotalBlocks: 27306,
			MaxLoRA: 4, RunningLoRA: []string{"sql-lora", "chat-lora"}, WaitingLoRA: []string{"math-lora"},
			PrefixCacheQueries: 1234567, PrefixCacheHits: 456789,
		}},
		{"empty engine is vllm", "", "vllm_minimal.txt", Sample{Running: 1}},
		{"vllm data parallel sums counts, max usage", EngineVLLM, "vllm_dp.txt", Sample{
			Waiting: 3, Running: 10, KVUsage: 0.75, BlockSize: 32, TotalBlocks: 1200,
		}},
		{"vllm v0 names, None blocks unknown", EngineVLLM, "vllm_v0.txt", Sample{
			Running: 2, KVUsage: 0.0625, BlockSize: 16,
		}},
		{"escapes, quoted name, NaN, CRLF", EngineVLLM, "vllm_escaped.txt", Sample{
			Waiting: 2, Running: 3, KVUsage: 0.5,
			MaxLoRA: 2, RunningLoRA: []string{"a", "b"}, WaitingLoRA: []string{"c\nd"},
		}},
		{"sglang", EngineSGLang, "sglang.txt", Sample{
			Waiting: 2826, Running: 162, KVUsage: 0.28, BlockSize: 1, TotalBlocks: 28000,
		}},
		{"sglang v0.5.12 capacity gauges", EngineSGLang, "sglang_v0512.txt", Sample{
			Waiting: 4, Running: 12, KVUsage: 0.5, BlockSize: 64, TotalBlocks: 65088,
		}},
		{"trtllm serve", EngineTRTLLM, "trtllm.txt", Sample{
			Waiting: 5, Running: 12, KVUsage: 0.61, BlockSize: 32, TotalBlocks: 8192,
		}},
		{"triton", EngineTriton, "triton.txt", Sample{
			Waiting: 4, Running: 9, KVUsage: 0.3125, BlockSize: 64, TotalBlocks: 4096,
		}},
		{"triton without fraction uses used/max", EngineTriton, "triton_nofraction.txt", Sample{
			Running: 2, KVUsage: 0.25, BlockSize: 64, TotalBlocks: 4096,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFile(t, tt.engine, tt.file)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		engine  Engine
		file    string
		missing string // metric named by a MetricNotFoundError, "" for other errors
		substr  string
	}{
		{"vllm running missing", EngineVLLM, "vllm_missing_running.txt", "vllm:num_requests_running", ""},
		{"other engine's page", EngineSGLang, "vllm.txt", "sglang:num_queue_reqs", ""},
		{"vllm page read as trtllm", EngineTRTLLM, "vllm.txt", "trtllm_num_requests_waiting", ""},
		{"triton waiting missing", EngineTriton, "triton_no_waiting.txt",
			`nv_trt_llm_request_metrics{request_type="waiting"}`, ""},
		{"garbage", EngineVLLM, "garbage.txt", "vllm:num_requests_waiting", ""},
		{"bad value", EngineVLLM, "vllm_badvalue.txt", "", "bad sample value"},
		{"unknown engine", "tgi", "vllm.txt", "", "unknown engine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFile(t, tt.engine, tt.file)
			if err == nil {
				t.Fatal("Parse succeeded, want error")
			}
			var nf *MetricNotFoundError
			if tt.missing != "" {
				if !errors.As(err, &nf) || nf.Metric != tt.missing || !errors.Is(err, ErrMetricNotFound) {
					t.Fatalf("err = %v, want metric %s not found", err, tt.missing)
				}
				if want := "metric " + tt.missing + " not found"; err.Error() != want {
					t.Errorf("message %q, want %q", err, want)
				}
				return
			}
			if errors.Is(err, ErrMetricNotFound) || !strings.Contains(err.Error(), tt.substr) {
				t.Errorf("err = %v, want one containing %q", err, tt.substr)
			}
		})
	}
}

func TestParseLoRANewestWins(t *testing.T) {
	tests := []struct {
		name, page string
		wantMax    int
		wantRun    []string
	}{
		{"newest last", `vllm:lora_requests_info{max_lora="1",running_lora_adapters="old"} 100
vllm:lora_requests_info{max_lora="3",running_lora_adapters="new"} 200
`, 3, []string{"new"}},
		{"newest first", `vllm:lora_requests_info{max_lora="3",running_lora_adapters="new"} 200
vllm:lora_requests_info{max_lora="1",running_lora_adapters="old"} 100
`, 3, []string{"new"}},
		{"tie keeps first", `vllm:lora_requests_info{max_lora="2",running_lora_adapters="x,y"} 5
vllm:lora_requests_info{max_lora="1",running_lora_adapters="z"} 5
`, 2, []string{"x", "y"}},
		{"empty lists are nil", `vllm:lora_requests_info{max_lora="8",running_lora_adapters="",waiting_lora_adapters=""} 5
`, 8, nil},
	}
	const load = "vllm:num_requests_waiting 0\nvllm:num_requests_running 0\n"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(EngineVLLM, strings.NewReader(load+tt.page))
			if err != nil {
				t.Fatal(err)
			}
			if s.MaxLoRA != tt.wantMax || !reflect.DeepEqual(s.RunningLoRA, tt.wantRun) {
				t.Errorf("MaxLoRA=%d Running=%q, want %d %q", s.MaxLoRA, s.RunningLoRA, tt.wantMax, tt.wantRun)
			}
		})
	}
}

func TestParseClampsAndLines(t *testing.T) {
	tests := []struct {
		name, page string
		want       Sample
		wantErr    bool
	}{
		{"negative counts are zero, usage clamped", "vllm:num_requests_waiting -3\nvllm:num_requests_running +Inf\nvllm:kv_cache_usage_perc 7\n",
			Sample{Running: maxCount, KVUsage: 1}, false},
		{"blank lines, tabs, trailing comma", "\n\t\nvllm:num_requests_waiting{a=\"1\",}\t4 123\n  vllm:num_requests_running 1\n",
			Sample{Waiting: 4, Running: 1}, false},
		{"other metrics' junk is skipped", "foo{{{ bar\nvllm:num_requests_waiting 1\nvllm:num_requests_running 1\n",
			Sample{Waiting: 1, Running: 1}, false},
		{"unterminated label value", "vllm:num_requests_waiting{a=\"1} 4\n", Sample{}, true},
		{"no value", "vllm:num_requests_waiting\n", Sample{}, true},
		{"bad label syntax", "vllm:num_requests_waiting{a} 4\n", Sample{}, true},
		{"too long line", "x" + strings.Repeat("y", maxLineBytes+1) + " 1\n", Sample{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(EngineVLLM, strings.NewReader(tt.page))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestValidEngine(t *testing.T) {
	for e, want := range map[Engine]bool{"": true, EngineVLLM: true, EngineSGLang: true, EngineTRTLLM: true, EngineTriton: true, "tgi": false} {
		if got := ValidEngine(e); got != want {
			t.Errorf("ValidEngine(%q) = %v, want %v", e, got, want)
		}
	}
}
