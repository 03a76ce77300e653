package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestClientDisconnectAbortsRequest(t *testing.T) {
	// Slow steps so the request is still running when the client leaves.
	url, s := startServer(t, "--step-overhead", "20ms")
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/completions",
		strings.NewReader(`{"model":"modelsim","prompt":"a long answer please","max_tokens":1000,"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil { // first token arrived: it is running
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	for i := 0; s.run.stats().Running != 0; i++ {
		if i > 200 {
			t.Fatal("request still running 2s after its client left")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := s.run.stats(); st.UsedBlocks != 0 {
		t.Fatalf("blocks not freed: %+v", st)
	}
}

func TestResetCacheEndpoint(t *testing.T) {
	url, _ := startServer(t)
	body := fmt.Sprintf(`{"model":"modelsim","prompt":%q,"max_tokens":1}`, strings.Repeat("cache me if you can ", 10))
	cached := func() int {
		_, data := post(t, url+"/v1/completions", body)
		var r responseBody
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		return r.Usage.PromptTokensDetails.CachedTokens
	}
	cached()
	if n := cached(); n == 0 {
		t.Fatal("second request got no cache hit")
	}
	if resp, _ := post(t, url+"/admin/reset-cache", ""); resp.StatusCode != 200 {
		t.Fatalf("reset status %d", resp.StatusCode)
	}
	if n := cached(); n != 0 {
		t.Fatalf("cached %d tokens right after reset", n)
	}
}
