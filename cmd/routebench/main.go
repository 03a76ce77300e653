// Command routebench replays a workload against a simulated fleet in virtual
// time, once per routing policy, through the picker's real router code, and
// reports TTFT, latency, throughput, prefix hits, queueing and rejections as
// a table (stdout), CSV, JSON and plots.
//
//	routebench -scenario brief                  # the product brief's scenario, calibrated
//	routebench -scenario trace -endpoints 8     # the Mooncake trace
//	routebench -scenario conversation           # Mooncake's production conversation trace
//	routebench -scenario shared-prefix -rate 20 -policies kv,round-robin
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/kvpick/kvpick/internal/cli"
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
	jitter         time.Duration
	jitterSeed     int64
	seed           int64
	out            string
	calibrate      bool
	calTarget      time.Duration
	ttftTarget     time.Duration
	eventsDelay    time.Duration
	scrapeInterval time.Duration
	queueThreshold float64
	queuePolicy    string
	queueLate      time.Duration
	queueLateWin   time.Duration
	eventsBridge   string
	kvQueueThresh  string
	overlapWeight  float64
	costModel      string
	decodeWeight   float64
	prefillWeight  float64
	commonHolders  int
	hotPrefix      int
	sessionLoad    string
	popularShare   float64
	pressureWindow time.Duration
	seeds          []int64   // -seeds, parsed; nil: one run at -seed
	collect        *seedRuns // set while -seeds runs: every report's summaries
	balanceBound   time.Duration
	predictedTTL   time.Duration
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
	zipf           float64
	output         int
	burstiness     float64
	sessions       bool
	page           string
	pageOnly       bool
	markdown       bool
	records        bool
	live           string
	replicas       int
	replicaSync    string
	queueOrder     string
	queueSlack     time.Duration
	queueSlackMax  time.Duration
	syncDelay      time.Duration
	syncJitter     time.Duration
}

// program describes routebench for --help and error messages.
var program = cli.Program{
	Name: "routebench",
	About: "replays a workload against a simulated model-server fleet in virtual time, once per routing policy, " +
		"through kvpick's real router code, and reports TTFT, latency, prefix hits and queueing per policy.",
	Synopsis: "routebench [-scenario brief|trace|conversation|shared-prefix|multiturn|burst] [flags]",
	Notes: `Examples:
  routebench -scenario brief                        # the product brief's scenario, calibrated (about a minute)
  routebench -scenario trace -endpoints 8           # the Mooncake trace embedded from config/traces
  routebench -scenario conversation                 # Mooncake's hour of production chat requests (config/traces)
  routebench -scenario shared-prefix -rate 20 -policies kv,round-robin`,
}

func parseFlags(args []string) (*options, error) {
	return parseFlagsTo(args, os.Stdout)
}

// parseFlagsTo parses args; --help writes the usage to help and returns flag.ErrHelp.
func parseFlagsTo(args []string, help io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("routebench", flag.ContinueOnError)
	fs.StringVar(&o.scenario, "scenario", "brief", "brief | trace | conversation | shared-prefix | multiturn | burst")
	fs.StringVar(&o.trace, "trace", "", "Mooncake trace file (JSON lines, or gzipped) for -scenario trace (empty: the embedded config/traces/mooncake_synthetic_trace.jsonl)")
	fs.Float64Var(&o.rateScale, "rate-scale", 1, "trace, conversation: multiply the arrival rate by this")
	fs.Float64Var(&o.rate, "rate", 0, "synthetic scenarios: requests (or sessions) per second; brief: skip calibration and use this load")
	fs.IntVar(&o.endpoints, "endpoints", 0, "endpoints in the fleet (default: 2 for brief, 8 otherwise)")
	fs.StringVar(&o.policies, "policies", "", "comma-separated policies (default all: "+strings.Join(policyNames(), ",")+")")
	fs.IntVar(&o.requests, "requests", 0, "requests to generate, or to keep from the trace (0: scenario default / whole trace)")
	fs.IntVar(&o.repeat, "repeat", 1, "trace, conversation: replay it this many times back to back (hash ids shifted per repeat)")
	fs.Int64Var(&o.seed, "seed", 1, "seed for the workload and the policies' random choices")
	fs.DurationVar(&o.jitter, "jitter", 0, "move every arrival later by a uniform random [0, this) drawn from -jitter-seed, prompts unchanged: replays of one seed under several jitter seeds show how much of a gap between policies is timing chaos")
	fs.Int64Var(&o.jitterSeed, "jitter-seed", 1, "seed of -jitter's draws")
	seeds := fs.String("seeds", "", `run once per seed ("1-9", "1,4,7"; overrides -seed), each seed's files in -out/seed-N (no page), then each report's policies over the seeds in -out/NAME-seeds.csv and .md`)
	fs.StringVar(&o.out, "out", "out/routebench", "directory for CSV, JSON and plots (empty: none)")
	fs.BoolVar(&o.calibrate, "calibrate", true, "brief: search the load at which round-robin's p95 TTFT is -calibrate-p95")
	fs.DurationVar(&o.calTarget, "calibrate-p95", 1700*time.Millisecond, "brief: round-robin p95 TTFT the calibration aims for")
	fs.DurationVar(&o.ttftTarget, "ttft-target", time.Second, "TTFT objective to report against")
	fs.DurationVar(&o.eventsDelay, "events-delay", 50*time.Millisecond, "delay of KV events from engine to picker (kv-observed)")
	fs.DurationVar(&o.scrapeInterval, "scrape-interval", 100*time.Millisecond, "metrics scrape interval")
	fs.Float64Var(&o.queueThreshold, "queue-threshold", 0.8, "kv+queue admission threshold")
	fs.StringVar(&o.queuePolicy, "queue-policy", "", "admission.queuePolicy of the kv policies: fcfs or wspt (empty: the default)")
	fs.DurationVar(&o.queueLate, "queue-late-after", -1, "admission.lateAfter of the kv policies (0: off; negative: the default)")
	fs.DurationVar(&o.queueLateWin, "queue-late-window", -1, "admission.lateWindow of the kv policies (0: no bound; negative: the default)")
	fs.StringVar(&o.eventsBridge, "kv-events-bridge", "", "kv.eventsBridge of the kv policies: on or off (empty: the default, off)")
	fs.StringVar(&o.kvQueueThresh, "kv-queue-threshold", "", "admission.queueThreshold of kv and kv-observed: a fraction, or off (empty: the default)")
	fs.Float64Var(&o.overlapWeight, "kv-overlap-weight", 0, "router.kvCost.overlapWeight of the kv policies (0: the default, 1.0)")
	fs.StringVar(&o.costModel, "kv-cost-model", "", "router.kvCost.model of the kv policies: time or blocks (empty: the default, time)")
	fs.Float64Var(&o.decodeWeight, "kv-decode-weight", -1, "router.kvCost.decodeWeight of the kv policies (negative: the default)")
	fs.Float64Var(&o.prefillWeight, "kv-prefill-weight", -1, "router.kvCost.prefillWeight of the kv policies (negative: the default)")
	fs.IntVar(&o.commonHolders, "kv-common-holders", -1, "router.kvCost.commonHolders of the kv policies (0: off; negative: the default, 2)")
	fs.IntVar(&o.hotPrefix, "kv-hot-prefix-requests", -1, "router.kvCost.hotPrefixRequests of the kv policies (0: off; negative: the default, 3)")
	fs.StringVar(&o.sessionLoad, "kv-session-load", "", "router.kvCost.sessionLoad of the kv policies: on or off (empty: the default, off)")
	fs.Float64Var(&o.popularShare, "kv-popular-share", -1, "router.kvCost.popularShare of the kv policies (0: off; negative: the default, 0.15)")
	fs.DurationVar(&o.pressureWindow, "kv-prefill-pressure-window", -1, "router.kvCost.prefillPressureWindow of the kv policies (0s: off; negative: the default, 30s)")
	fs.DurationVar(&o.predictedTTL, "kv-predicted-ttl", 0, "kv.predictedTTL and kv.predictedTTLKnownCapacity of the kv policies (0: the defaults; the simulated engines report their capacity, so the latter is in use, default 600s)")
	fs.DurationVar(&o.balanceBound, "kv-balance-bound", -1, "router.kvCost.balanceBound of the kv policies (negative: the default; 0 disables)")
	fs.IntVar(&o.clientMaxTok, "client-max-tokens", 0, "max_tokens every client sends (0: none); the engine still stops at the workload's output length")
	fs.IntVar(&o.parallel, "parallel", runtime.GOMAXPROCS(0), "policies simulated at once")
	fs.StringVar(&o.engineProfile, "engine-profile", "", "comma-separated YAML engine profiles overlaid on pkg/engine defaults, assigned to endpoints in turn (heterogeneous fleets)")
	fs.BoolVar(&o.noPlots, "no-plots", false, "skip the plots")
	fs.IntVar(&o.prefixes, "prefixes", 150, "shared-prefix: number of shared prefixes")
	fs.IntVar(&o.prefixLen, "prefix-len", 6000, "shared-prefix: prefix length in tokens")
	fs.IntVar(&o.suffixLen, "suffix-len", 1200, "shared-prefix: unique suffix length in tokens")
	fs.Float64Var(&o.share, "share", 1, "shared-prefix: share of requests that reuse a prefix (the rest are unique prompts)")
	fs.Float64Var(&o.zipf, "prefix-zipf", 0, "shared-prefix: draw prefix k with probability in proportion to 1/(k+1)^this (0: uniform; at most 10)")
	fs.IntVar(&o.output, "output", 150, "synthetic scenarios: output tokens per request")
	fs.Float64Var(&o.burstiness, "burstiness", 1, "synthetic scenarios: squared CV of inter-arrival gaps (1 = Poisson, >1 = bursty)")
	fs.BoolVar(&o.sessions, "sessions", false, "multiturn: send each session's id in x-session-id (session affinity applies in every mode)")
	fs.StringVar(&o.plotFormat, "plot-format", "png", "plot file format: png or svg")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.StringVar(&o.page, "html", "", `write a page with every report's tables and figures in -out here (default: -out/index.html; "off": none)`)
	fs.BoolVar(&o.records, "records", false, "also write every request's record (NAME-records.csv in -out): arrival, dispatch, first token, class, endpoint")
	fs.BoolVar(&o.markdown, "markdown", false, "also write each report as a Markdown table (NAME.md in -out), the README's form")
	fs.BoolVar(&o.pageOnly, "html-only", false, "only rebuild the -html page from the reports already in -out (no simulation)")
	fs.StringVar(&o.live, "live", "", "a text file shown as the page's last section (the demo's live run)")
	fs.IntVar(&o.replicas, "replicas", 1, "picker replicas per policy, arrivals spread over them in turn (as a gateway spreads streams)")
	fs.StringVar(&o.replicaSync, "replica-sync", "off", "on | off: replicas share their decisions' lifecycles (kvpick policies only)")
	fs.DurationVar(&o.syncDelay, "sync-delay", 5*time.Millisecond, "with -replica-sync on: how long an event takes from one replica to the others")
	fs.DurationVar(&o.syncJitter, "sync-jitter", 0, "with -replica-sync on: add a uniform random [0, this) to each batch's delay (in order per sender)")
	fs.DurationVar(&o.queueSlack, "replica-queue-slack", -1, "with -replica-sync on: replicaSync.queueSlack of the kv policies (negative: the default)")
	fs.DurationVar(&o.queueSlackMax, "replica-queue-slack-max", -1, "with -replica-sync on: replicaSync.queueSlackMax of the kv policies (negative: the default; at or below the slack: a fixed slack)")
	fs.StringVar(&o.queueOrder, "replica-queue-order", "", "with -replica-sync on: replicaSync.queueOrder of the kv policies, shared or local (empty: the default, shared)")
	if err := program.Parse(fs, args, help); err != nil {
		return nil, err
	}
	if *seeds != "" {
		var err error
		if o.seeds, err = parseSeeds(*seeds); err != nil {
			return nil, err
		}
		if o.pageOnly {
			return nil, errors.New("-html-only rebuilds one run's page; -seeds writes none")
		}
		o.page = "off"
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
	switch {
	case o.page == "off":
		o.page = ""
	case o.page == "" && o.out != "":
		o.page = filepath.Join(o.out, "index.html")
	}
	if o.pageOnly && o.page == "" {
		return nil, errors.New("-html-only needs -out (the reports) or -html")
	}
	if o.replicas < 1 || o.replicas > 64 {
		return nil, fmt.Errorf("-replicas %d: must be 1..64", o.replicas)
	}
	if o.replicaSync != "on" && o.replicaSync != "off" {
		return nil, fmt.Errorf("-replica-sync %q: on or off", o.replicaSync)
	}
	if o.queueOrder != "" && o.queueOrder != "shared" && o.queueOrder != "local" {
		return nil, fmt.Errorf("-replica-queue-order %q: shared or local", o.queueOrder)
	}
	if o.jitter < 0 {
		return nil, fmt.Errorf("-jitter %v: must not be negative", o.jitter)
	}
	if o.endpoints < 1 || o.endpoints > 250 {
		return nil, fmt.Errorf("-endpoints %d: must be 1..250", o.endpoints)
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		os.Exit(program.Fail(os.Stderr, err, cli.ExitUsage))
	}
	// A run allocates prompts at a high rate and keeps little: trade memory
	// for less collection work.
	debug.SetGCPercent(400)
	stop, err := startProfile(o.cpuProfile)
	if err != nil {
		os.Exit(program.Fail(os.Stderr, err, cli.ExitUsage))
	}
	switch {
	case o.seeds != nil:
		err = runSeeds(o, o.seeds)
	case !o.pageOnly:
		err = run(o)
	}
	stop()
	if err == nil && o.page != "" {
		err = writeIndex(o.page, o.out, o.live)
	}
	if err == nil && o.markdown && o.out != "" && o.seeds == nil {
		err = writeMarkdown(o.out)
	}
	if err != nil {
		os.Exit(program.Fail(os.Stderr, err, 1))
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
