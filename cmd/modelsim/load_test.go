package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkStreamedRequests fires b.N streamed completions (short prompts,
// max_tokens 4) over loopback with MODELSIM_CONCURRENCY (default 64) clients
// and reports req/s. It targets MODELSIM_URL (a running modelsim, the
// realistic setup: one process serving, another loading) or else starts
// modelsim in-process with a fast profile (1ms step overhead):
//
//	modelsim --port 8123 --step-overhead 1ms --decode-cost 10us --prefill-rate 1e6 &
//	MODELSIM_URL=http://127.0.0.1:8123 go test -run '^$' -bench StreamedRequests -benchtime 20000x ./cmd/modelsim
func BenchmarkStreamedRequests(b *testing.B) {
	url := os.Getenv("MODELSIM_URL")
	if url == "" {
		url = startBenchServer(b)
	}
	conc := 64
	if v, err := strconv.Atoi(os.Getenv("MODELSIM_CONCURRENCY")); err == nil && v > 0 {
		conc = v
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: conc, MaxIdleConnsPerHost: conc, DisableCompression: true}}
	var next, failed atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				if err := streamOne(client, url, w, i); err != nil {
					if failed.Add(1) <= 3 {
						b.Log(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d requests failed", f, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}

var doneMarker = []byte("data: [DONE]\n\n")

// streamOne sends one streamed completion and reads it to [DONE].
func streamOne(c *http.Client, url string, worker int, i int64) error {
	body := fmt.Sprintf(`{"model":"modelsim","prompt":"user %d asks question %d about caching","max_tokens":4,"stream":true}`,
		worker, i%50)
	resp, err := c.Post(url+"/v1/completions", "application/json", bytes.NewBufferString(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.HasSuffix(data, doneMarker) {
		return fmt.Errorf("status %d, body %.200q", resp.StatusCode, data)
	}
	return nil
}

func startBenchServer(b *testing.B) string {
	o, err := parseOptions([]string{"--step-overhead", "1ms", "--decode-cost", "10us", "--prefill-rate", "1000000"},
		io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := contextWithCancel()
	s, err := newServer(ctx, o)
	if err != nil {
		b.Fatal(err)
	}
	go s.run.run(ctx)
	hs := newLoopbackServer(s)
	b.Cleanup(func() { hs.Close(); cancel() })
	return hs.URL
}
