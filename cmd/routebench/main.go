// Command routebench replays a workload against a simulated fleet in virtual
// time, once per routing policy, through the picker's real router code, and
// reports TTFT, latency, throughput, prefix hits, queueing and rejections as
// a table (stdout), CSV, JSON and plots.
//
//	routebench -scenario brief                  # the product brief's scenario, calibrated
//	routebench -scenario trace -endpoints 8     # the Mooncake trace
//	routebench -scenario shared-prefix -rate 20 -policies kv,round-robin
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"
)

// options are the command-line flags.
type options struct {
	scenario       string
	trace          string
	rateScale      float64
	rate           float64
	endpoints      int
	policies       string
	requests       int
	repeat         int
	seed           int64
	out            string
	calibrate      bool
	calTarget      time.Duration
	ttftTarget     time.Duration
	eventsDelay    time.Duration
	scrapeInterval time.Duration
	queueThreshold float64
	overlapWeight  float64
	costModel      string
	decodeWeight   float64
	prefillWeight  float64
	balanceBound   time.Duration
	clientMaxTok   int
	parallel       int
	engineProfile  string
	noPlots        bool
	cpuProfile     string
	plotFormat     string
	prefixes       int
	prefixLen      int
	suffixLen      int
	share          float64
	output         int
	burstiness     float64
	sessions       bool
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("routebench", flag.ContinueOnError)
	fs.StringVar(&o.scenario, "scenario", "brief", "brief | trace | shared-prefix | multiturn | burst")
	fs.StringVar(&o.trace, "trace", defaultTrace, "Mooncake trace file (JSON lines) for -scenario trace")
	fs.Float64Var(&o.rateScale, "rate-scale", 1, "trace: multiply the arrival rate by this")
	fs.Float64Var(&o.rate, "rate", 0, "synthetic scenarios: requests (or sessions) per second; brief: skip calibration and use this load")
	fs.IntVar(&o.endpoints, "endpoints", 0, "endpoints in the fleet (default: 2 for brief, 8 otherwise)")
	fs.StringVar(&o.policies, "policies", "", "comma-separated policies (default all: "+strings.Join(policyNames(), ",")+")")
	fs.IntVar(&o.requests, "requests", 0, "requests to generate, or to keep from the trace (0: scenario default / whole trace)")
	fs.IntVar(&o.repeat, "repeat", 1, "trace: replay it this many times back to back (hash ids shifted per repeat)")
	fs.Int64Var(&o.seed, "seed", 1, "seed for the workload and the policies' random choices")
	fs.StringVar(&o.out, "out", "out/routebench", "directory for CSV, JSON and plots (empty: none)")
	fs.BoolVar(&o.calibrate, "calibrate", true, "brief: search the load at which round-robin's p95 TTFT is -calibrate-p95")
	fs.DurationVar(&o.calTarget, "calibrate-p95", 1700*time.Millisecond, "brief: round-robin p95 TTFT the calibration aims for")
	fs.DurationVar(&o.ttftTarget, "ttft-target", time.Second, "TTFT objective to report against")
	fs.DurationVar(&o.eventsDelay, "events-delay", 50*time.Millisecond, "delay of KV events from engine to picker (kv-observed)")
	fs.DurationVar(&o.scrapeInterval, "scrape-interval", 100*time.Millisecond, "metrics scrape interval")
	fs.Float64Var(&o.queueThreshold, "queue-threshold", 0.8, "kv+queue admission threshold")
	fs.Float64Var(&o.overlapWeight, "kv-overlap-weight", 0, "router.kvCost.overlapWeight of the kv policies (0: the default, 1.0)")
	fs.StringVar(&o.costModel, "kv-cost-model", "", "router.kvCost.model of the kv policies: time or blocks (empty: the default, time)")
	fs.Float64Var(&o.decodeWeight, "kv-decode-weight", -1, "router.kvCost.decodeWeight of the kv policies (negative: the default)")
	fs.Float64Var(&o.prefillWeight, "kv-prefill-weight", -1, "router.kvCost.prefillWeight of the kv policies (negative: the default)")
	fs.DurationVar(&o.balanceBound, "kv-balance-bound", -1, "router.kvCost.balanceBound of the kv policies (negative: the default; 0 disables)")
	fs.IntVar(&o.clientMaxTok, "client-max-tokens", 0, "max_tokens every client sends (0: none); the engine still stops at the workload's output length")
	fs.IntVar(&o.parallel, "parallel", runtime.GOMAXPROCS(0), "policies simulated at once")
	fs.StringVar(&o.engineProfile, "engine-profile", "", "comma-separated YAML engine profiles overlaid on pkg/engine defaults, assigned to endpoints in turn (heterogeneous fleets)")
	fs.BoolVar(&o.noPlots, "no-plots", false, "skip the plots")
	fs.IntVar(&o.prefixes, "prefixes", 150, "shared-prefix: number of shared prefixes")
	fs.IntVar(&o.prefixLen, "prefix-len", 6000, "shared-prefix: prefix length in tokens")
	fs.IntVar(&o.suffixLen, "suffix-len", 1200, "shared-prefix: unique suffix length in tokens")
	fs.Float64Var(&o.share, "share", 1, "shared-prefix: share of requests that reuse a prefix (the rest are unique prompts)")
	fs.IntVar(&o.output, "output", 150, "synthetic scenarios: output tokens per request")
	fs.Float64Var(&o.burstiness, "burstiness", 1, "synthetic scenarios: squared CV of inter-arrival gaps (1 = Poisson, >1 = bursty)")
	fs.BoolVar(&o.sessions, "sessions", false, "multiturn: send each session's id in x-session-id (session affinity applies in every mode)")
	fs.StringVar(&o.plotFormat, "plot-format", "svg", "plot file format: svg or png")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	if o.endpoints == 0 {
		o.endpoints = 8
		if o.scenario == "brief" {
			o.endpoints = 2
		}
	}
	if o.plotFormat != "svg" && o.plotFormat != "png" {
		return nil, fmt.Errorf("-plot-format %q: svg or png", o.plotFormat)
	}
	if o.endpoints < 1 || o.endpoints > 250 {
		return nil, fmt.Errorf("-endpoints %d: must be 1..250", o.endpoints)
	}
	return o, nil
}

// defaultTrace is where this repository's benchmark trace lives on the
// development machines; pass -trace elsewhere.
const defaultTrace = "/work/shared/traces/mooncake_synthetic_trace.jsonl"

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "routebench:", err)
		os.Exit(2)
	}
	// A run allocates prompts at a high rate and keeps little: trade memory
	// for less collection work.
	debug.SetGCPercent(400)
	stop, err := startProfile(o.cpuProfile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "routebench:", err)
		os.Exit(1)
	}
	err = run(o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "routebench:", err)
		os.Exit(1)
	}
}

// startProfile starts CPU profiling to path (no-op when empty).
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
