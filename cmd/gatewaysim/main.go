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
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/kvpick/kvpick/internal/cli"
	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

var program = cli.Program{
	Name: "gatewaysim",
	About: "a stand-in for the gateway (Envoy) in front of kvpick: asks the picker where each request goes over a " +
		"real ext_proc stream, sends it there, and prints where it went and its time to first token.",
	Synopsis: "gatewaysim [--picker 127.0.0.1:9002] [--plaintext] [--requests N] [flags]",
	Notes: `Example, against a local kvpick started with --plaintext (README, "Run it by hand"):
  bin/gatewaysim --plaintext --requests 8 --endpoints-file config/samples/endpoints-local.yaml`,
}

type options struct {
	picker        string
	plaintext     bool
	requests      int
	concurrency   int
	workload      string
	model         string
	maxTokens     int
	seed          uint64
	quiet         bool
	scale         float64
	endpointsFile string
	label         string
	summaryOut    string
	baseline      string
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stdout)
	if err != nil {
		os.Exit(program.Fail(os.Stderr, err, cli.ExitUsage))
	}
	if err := run(o, os.Stdout); err != nil {
		os.Exit(program.Fail(os.Stderr, err, 1))
	}
}

func parseFlags(args []string, help io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("gatewaysim", flag.ContinueOnError)
	fs.StringVar(&o.picker, "picker", "127.0.0.1:9002", "kvpick ext_proc address")
	fs.BoolVar(&o.plaintext, "plaintext", false, "connect without TLS, for a kvpick started with --plaintext (else TLS without verification: loopback demo only)")
	fs.IntVar(&o.requests, "requests", 40, "requests to send")
	fs.IntVar(&o.concurrency, "concurrency", 4, "requests in flight at once")
	fs.StringVar(&o.workload, "workload", "brief", "brief (80% share a 6,000-token prefix, 20% unrelated 12,000-token documents) or unique")
	fs.Float64Var(&o.scale, "scale", 1, "multiply prompt lengths by this")
	fs.StringVar(&o.model, "model", "demo-model", "model name in the requests")
	fs.IntVar(&o.maxTokens, "max-tokens", 16, "max_tokens of each request")
	fs.Uint64Var(&o.seed, "seed", 1, "workload seed")
	fs.BoolVar(&o.quiet, "quiet", false, "print only the summary")
	fs.StringVar(&o.endpointsFile, "endpoints-file", "", "kvpick's endpoints file: endpoints are then printed by name (sim-0) rather than address")
	fs.StringVar(&o.label, "label", "", "name of this run in the summary and verdict (e.g. the router mode)")
	fs.StringVar(&o.summaryOut, "summary-out", "", "write the TTFT summary as JSON to this file")
	fs.StringVar(&o.baseline, "baseline", "", "a -summary-out file of an earlier run: end with a verdict line comparing this run to it")
	if err := program.Parse(fs, args, help); err != nil {
		return o, err
	}
	if o.workload != "brief" && o.workload != "unique" {
		return o, fmt.Errorf("--workload %q: brief or unique", o.workload)
	}
	return o, nil
}

type outcome struct {
	n        int
	kind     string
	endpoint string
	status   int
	ttft     time.Duration
	total    time.Duration
	body     []byte // the response body when the status is 4xx/5xx
	err      error
}

func run(o options, w io.Writer) error {
	names, err := endpointNames(o.endpointsFile)
	if err != nil {
		return err
	}
	if err := probe(o.picker, !o.plaintext, 3*time.Second); err != nil {
		return err
	}
	var tlsConf *tls.Config
	if !o.plaintext {
		tlsConf = &tls.Config{InsecureSkipVerify: true} // the picker's self-signed certificate on loopback
	}
	dialCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := envoyclient.Dial(dialCtx, o.picker, tlsConf)
	if err != nil {
		return fmt.Errorf("dial picker %s: %w", o.picker, err)
	}
	defer c.Close()
	results := sendAll(o, c, names, w)
	return report(o, results, names, w)
}

// sendAll sends the workload with o.concurrency requests in flight.
func sendAll(o options, c *envoyclient.Client, names map[string]string, w io.Writer) []outcome {
	reqs := workload(o)
	results := make([]outcome, len(reqs))
	hc := &http.Client{Timeout: 2 * time.Minute}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := make(chan int)
	for range max(o.concurrency, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = send(context.Background(), c, hc, i, reqs[i])
				if !o.quiet {
					mu.Lock()
					printOutcome(w, results[i], names)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range reqs {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
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
		if res.Status >= 400 {
			out.body = res.Body
		}
	}
	return out
}

func printOutcome(w io.Writer, r outcome, names map[string]string) {
	switch {
	case r.err != nil:
		fmt.Fprintf(w, "#%-3d %-6s error: %v\n", r.n, r.kind, r.err)
	case r.status >= 400:
		fmt.Fprintf(w, "#%-3d %-6s status %d: %s\n", r.n, r.kind, r.status, errorBody(r.body))
	default:
		fmt.Fprintf(w, "#%-3d %-6s -> %-22s status %d  ttft %7.1f ms  total %7.1f ms\n", r.n, r.kind,
			display(r.endpoint, names), r.status, ms(r.ttft), ms(r.total))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
