// Command gatewaysim plays the gateway in front of kvpick on a laptop: for
// each request it opens an ext_proc stream to the picker exactly as Envoy
// does, sends the HTTP request to the endpoint the picker chose, streams the
// response back through the picker, and reports where each request went and
// its time to first token. It is the demo's and the e2e tests' client.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

type options struct {
	picker      string
	plaintext   bool
	requests    int
	concurrency int
	workload    string
	model       string
	maxTokens   int
	seed        uint64
	quiet       bool
	scale       float64
}

func main() {
	var o options
	flag.StringVar(&o.picker, "picker", "127.0.0.1:9002", "kvpick ext_proc address")
	flag.BoolVar(&o.plaintext, "plaintext", false, "connect without TLS (else TLS without verification: loopback demo only)")
	flag.IntVar(&o.requests, "requests", 40, "requests to send")
	flag.IntVar(&o.concurrency, "concurrency", 4, "requests in flight at once")
	flag.StringVar(&o.workload, "workload", "brief", "brief (80% share a 6,000-token prefix, 20% unrelated 12,000-token documents) or unique")
	flag.Float64Var(&o.scale, "scale", 1, "multiply prompt lengths by this")
	flag.StringVar(&o.model, "model", "demo-model", "model name in the requests")
	flag.IntVar(&o.maxTokens, "max-tokens", 16, "max_tokens of each request")
	flag.Uint64Var(&o.seed, "seed", 1, "workload seed")
	flag.BoolVar(&o.quiet, "quiet", false, "print only the summary")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "gatewaysim:", err)
		os.Exit(1)
	}
}

type outcome struct {
	n        int
	kind     string
	endpoint string
	status   int
	ttft     time.Duration
	total    time.Duration
	err      error
}

func run(o options) error {
	ctx := context.Background()
	var tlsConf *tls.Config
	if !o.plaintext {
		tlsConf = &tls.Config{InsecureSkipVerify: true} // the picker's self-signed certificate on loopback
	}
	dialCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := envoyclient.Dial(dialCtx, o.picker, tlsConf)
	if err != nil {
		return fmt.Errorf("dial picker %s: %w", o.picker, err)
	}
	defer c.Close()
	reqs := workload(o)
	results := make([]outcome, len(reqs))
	hc := &http.Client{Timeout: 2 * time.Minute}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < max(o.concurrency, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = send(ctx, c, hc, i, reqs[i])
				if !o.quiet {
					printOutcome(results[i])
				}
			}
		}()
	}
	for i := range reqs {
		next <- i
	}
	close(next)
	wg.Wait()
	return summarize(results)
}

type genRequest struct {
	kind string
	body []byte
}

func send(ctx context.Context, c *envoyclient.Client, hc *http.Client, n int, r genRequest) outcome {
	res, err := c.Do(ctx, hc, envoyclient.Request{Method: "POST", Path: "/v1/completions", Body: r.body,
		Headers: map[string]string{"content-type": "application/json"}, ChunkSizes: []int{16384}})
	out := outcome{n: n, kind: r.kind, err: err}
	if err == nil {
		out.endpoint, out.status, out.ttft, out.total = res.Endpoint, res.Status, res.TTFT, res.Duration
	}
	return out
}

func printOutcome(r outcome) {
	if r.err != nil {
		fmt.Printf("#%-3d %-6s error: %v\n", r.n, r.kind, r.err)
		return
	}
	fmt.Printf("#%-3d %-6s -> %-16s status %d  ttft %7.1f ms  total %7.1f ms\n", r.n, r.kind, r.endpoint, r.status,
		ms(r.ttft), ms(r.total))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// workload builds the request bodies: each word is a space and four word
// bytes, which the approximate tokenizer (modelsim's tokenizer) counts as
// exactly one token.
func workload(o options) []genRequest {
	rng := rand.New(rand.NewPCG(o.seed, 42))
	prefix := words(rng, int(6000*o.scale), "policy")
	out := make([]genRequest, o.requests)
	for i := range out {
		kind, prompt := "shared", prefix+words(rng, 100, fmt.Sprintf("q%d", i))
		if o.workload == "unique" || rng.Float64() < 0.2 {
			kind, prompt = "doc", words(rng, int(12000*o.scale), fmt.Sprintf("doc%d", i))
		}
		body := fmt.Sprintf(`{"model":%q,"prompt":%q,"max_tokens":%d,"stream":true,"stream_options":{"include_usage":true}}`,
			o.model, prompt, o.maxTokens)
		out[i] = genRequest{kind: kind, body: []byte(body)}
	}
	return out
}

func words(rng *rand.Rand, n int, tag string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, " %s%03x", tag[:1], rng.IntN(1<<12)) // one approximate token each
	}
	return b.String()
}

func summarize(rs []outcome) error {
	byEP := map[string]map[string]int{}
	ttfts := map[string][]time.Duration{}
	failed := 0
	for _, r := range rs {
		if r.err != nil || r.status != 200 {
			failed++
			continue
		}
		if byEP[r.endpoint] == nil {
			byEP[r.endpoint] = map[string]int{}
		}
		byEP[r.endpoint][r.kind]++
		ttfts[r.kind] = append(ttfts[r.kind], r.ttft)
		ttfts["all"] = append(ttfts["all"], r.ttft)
	}
	fmt.Println("\nendpoint            shared  doc")
	keys := make([]string, 0, len(byEP))
	for k := range byEP {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("%-18s  %6d  %3d\n", k, byEP[k]["shared"], byEP[k]["doc"])
	}
	fmt.Println("\nkind    requests  ttft p50   ttft p95")
	for _, k := range []string{"shared", "doc", "all"} {
		d := ttfts[k]
		if len(d) == 0 {
			continue
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		fmt.Printf("%-6s  %8d  %6.0f ms  %6.0f ms\n", k, len(d), ms(d[len(d)/2]), ms(d[(len(d)*95-1)/100]))
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d requests failed", failed, len(rs))
	}
	return nil
}
