package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func outcomes(kind string, status int, ttfts ...int) []outcome {
	var rs []outcome
	for _, v := range ttfts {
		rs = append(rs, outcome{kind: kind, status: status, endpoint: "127.0.0.1:8001", ttft: time.Duration(v) * time.Millisecond})
	}
	return rs
}

func TestSummarizeAndVerdict(t *testing.T) {
	base := summarize("round-robin", append(outcomes("shared", 200, 100, 200, 300, 400, 1000), outcomes("doc", 200, 800, 900)...))
	if s := base.TTFT["shared"]; s.N != 5 || s.P50 != 300 || s.P95 != 1000 {
		t.Fatalf("shared stats %+v", s)
	}
	if s := base.TTFT["all"]; s.N != 7 {
		t.Fatalf("all stats %+v", s)
	}
	cur := summarize("kv", append(append(outcomes("shared", 200, 50, 100, 150, 200, 500), outcomes("doc", 200, 400, 900)...),
		outcome{kind: "doc", status: 503}))
	if cur.Failed != 1 || cur.TTFT["doc"].N != 2 {
		t.Fatalf("a failed request counts as failed, not in TTFT: %+v", cur)
	}
	got := verdict(base, cur)
	want := "verdict: kv vs round-robin: shared-prefix p50 300 ms -> 150 ms (-50%), p95 1000 ms -> 500 ms (-50%); documents p50 800 ms -> 400 ms (-50%), p95 900 ms -> 900 ms (+0%)"
	if got != want {
		t.Fatalf("verdict\n got %s\nwant %s", got, want)
	}
	if v := verdict(summary{}, cur); !strings.Contains(v, "no request kind") {
		t.Fatalf("empty baseline: %s", v)
	}
}

// A failed request's body is printed, and the run fails naming the first failure.
func TestReportFailuresShowBody(t *testing.T) {
	rs := append(outcomes("shared", 200, 100), outcome{n: 1, kind: "doc", status: 503,
		body: []byte(`{"error": {"type": "overloaded",` + "\n" + `"message": "all eligible endpoints are overloaded"}}`)})
	var w bytes.Buffer
	printOutcome(&w, rs[1], nil)
	if !strings.Contains(w.String(), `status 503: {"error": {"type": "overloaded", "message": "all eligible endpoints are overloaded"}}`) {
		t.Fatalf("printed %q", w.String())
	}
	dir := t.TempDir()
	err := report(options{label: "kv", summaryOut: filepath.Join(dir, "s.json")}, rs, map[string]string{"127.0.0.1:8001": "sim-0"}, &w)
	if err == nil || !strings.Contains(err.Error(), "1 of 2 requests failed; first: #1 status 503") {
		t.Fatalf("report error %v", err)
	}
	if !strings.Contains(w.String(), "sim-0 ") {
		t.Fatalf("placement table lacks the endpoint name:\n%s", w.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "s.json")); err != nil || !strings.Contains(string(b), `"label": "kv"`) {
		t.Fatalf("summary file: %s %v", b, err)
	}
}

func TestEndpointNames(t *testing.T) {
	names, err := endpointNames("../../config/samples/endpoints-local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if display("127.0.0.1:8001", names) != "sim-0" || display("127.0.0.1:8002", names) != "sim-1" || display("10.0.0.1:1", names) != "10.0.0.1:1" {
		t.Fatalf("names %v", names)
	}
	path := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(path, []byte("endpoints:\n  - {name: a, address: 127.0.0.1, port: x}\n"), 0o600)
	if _, err := endpointNames(path); err == nil || !strings.Contains(err.Error(), "endpoints[0].port") {
		t.Fatalf("bad file: %v", err)
	}
}

func TestParseFlags(t *testing.T) {
	var help bytes.Buffer
	if _, err := parseFlags([]string{"--help"}, &help); err == nil || !strings.HasPrefix(help.String(), "gatewaysim: a stand-in for the gateway") {
		t.Fatalf("help: %v %q", err, help.String())
	}
	if _, err := parseFlags([]string{"--workload", "odd"}, &help); err == nil || !strings.Contains(err.Error(), "brief or unique") {
		t.Fatalf("bad workload: %v", err)
	}
}
