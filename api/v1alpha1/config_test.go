package v1alpha1

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDefaultIsValid(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	if c.Router.Mode != ModeKV || *c.Router.KVCost.OverlapWeight != 1.0 || c.KV.PredictedTTL.Seconds() != 120 || c.KV.PredictedTTLKnownCapacity.Seconds() != 600 {
		t.Fatalf("unexpected defaults: %+v", c.Router)
	}
}

func TestParseAndValidate(t *testing.T) {
	cases := []struct {
		name    string
		yaml    string
		wantErr []string // substrings that must all appear
	}{
		{"empty file", ``, nil},
		{"valid kv", "router:\n  mode: kv\n  kvCost:\n    overlapWeight: 2\nadmission:\n  queueThreshold: 0.8\n", nil},
		{"unknown field", "router:\n  mood: kv\n", []string{"mood"}},
		{"unknown mode", "router:\n  mode: fastest\n", []string{"router.mode", "fastest"}},
		{"lora with least-loaded", "router:\n  mode: least-loaded\n  lora:\n    enabled: true\n", []string{"router.mode", "LoRA", "kv, random and round-robin"}},
		{"several problems at once", "router:\n  fallbacks: -1\nkv:\n  blockSize: 0\n  observation: psychic\n", nil},
		{"bad duration", "kv:\n  predictedTTL: 5\n", []string{"duration"}},
		{"negative weight", "router:\n  kvCost:\n    overlapWeight: -1\n", []string{"router.kvCost.overlapWeight"}},
		{"common holders off", "router:\n  kvCost:\n    commonHolders: 0\n", nil},
		{"common holders 1", "router:\n  kvCost:\n    commonHolders: 1\n", []string{"router.kvCost.commonHolders", "got 1"}},
		{"negative common holders", "router:\n  kvCost:\n    commonHolders: -2\n", []string{"router.kvCost.commonHolders"}},
		{"negative known-capacity ttl", "kv:\n  predictedTTLKnownCapacity: -5s\n", []string{"kv.predictedTTLKnownCapacity", "positive"}},
		{"hot prefix off", "router:\n  kvCost:\n    hotPrefixRequests: 0\n", nil},
		{"negative hot prefix requests", "router:\n  kvCost:\n    hotPrefixRequests: -1\n", []string{"router.kvCost.hotPrefixRequests", "got -1"}},
		{"popular prefixes off", "router:\n  kvCost:\n    popularShare: 0\n", nil},
		{"negative popular share", "router:\n  kvCost:\n    popularShare: -0.1\n", []string{"router.kvCost.popularShare", "-0.1"}},
		{"zero popular window", "router:\n  kvCost:\n    popularWindow: 0s\n", []string{"router.kvCost.popularWindow", "must be positive"}},
		{"prefill pressure off", "router:\n  kvCost:\n    prefillPressureWindow: 0s\n", nil},
		{"negative prefill pressure window", "router:\n  kvCost:\n    prefillPressureWindow: -1s\n", []string{"router.kvCost.prefillPressureWindow", "-1s"}},
		{"custom without profile", "router:\n  mode: custom\n", []string{"router.profile", "required"}},
		{"custom bad scorer", "router:\n  mode: custom\n  profile:\n    scorers: [{name: magic, weight: 1}]\n    picker: max-score\n", []string{"router.profile.scorers[0].name", "magic"}},
		{"gc off with a memory limit", "server:\n  gcPercent: -1\n  memoryLimitBytes: 1073741824\n", nil},
		{"gc off without a memory limit", "server:\n  gcPercent: -1\n", []string{"server.gcPercent", "memoryLimitBytes"}},
		{"gc percent below -1", "server:\n  gcPercent: -5\n", []string{"server.gcPercent", "-5"}},
		{"negative memory limit", "server:\n  memoryLimitBytes: -1\n", []string{"server.memoryLimitBytes"}},
		{"bytes tokenizer with events", "kv:\n  observation: events\n  tokenizer: bytes\n", []string{"kv.tokenizer", "KV events"}},
		{"bytes tokenizer with the default auto", "kv:\n  tokenizer: bytes\n", []string{"kv.tokenizer", "KV events", `"auto"`, "predicted"}},
		{"bytes tokenizer predicted", "kv:\n  observation: predicted\n  tokenizer: bytes\n", nil},
		{"zero silence bound", "kv:\n  eventsSilenceAfter: 0s\n", nil},
		{"negative silence bound", "kv:\n  eventsSilenceAfter: -1s\n", []string{"kv.eventsSilenceAfter"}},
		{"unknown tokenizer", "kv:\n  tokenizer: bpe\n", []string{"kv.tokenizer", "bpe"}},
		{"approximate tokenizer predicted", "kv:\n  tokenizer: approximate\n", nil},
		{"stride too large", "kv:\n  predictedStride: 65\n", []string{"kv.predictedStride", "65"}},
		{"negative stride", "kv:\n  predictedStride: -2\n", []string{"kv.predictedStride"}},
		{"zero queue threshold (Dynamo's most eager queueing)", "admission:\n  queueThreshold: 0\n", nil},
		{"negative queue threshold", "admission:\n  queueThreshold: -0.5\n", []string{"admission.queueThreshold"}},
		{"negative affinity threshold", "admission:\n  affinityThreshold: -1\n", []string{"admission.affinityThreshold"}},
		{"late-after off", "admission:\n  lateAfter: 0s\n", nil},
		{"negative late-after", "admission:\n  lateAfter: -1s\n", []string{"admission.lateAfter", "negative"}},
		{"late-after past the urgent mark", "admission:\n  maxQueueWait: 12s\n  lateAfter: 10s\n", []string{"admission.lateAfter", "10s", "five sixths"}},
		{"late-after under the urgent mark", "admission:\n  maxQueueWait: 12s\n  lateAfter: 9s\n", nil},
		{"late window unbounded", "admission:\n  lateWindow: 0s\n", nil},
		{"negative late window", "admission:\n  lateWindow: -5s\n", []string{"admission.lateWindow", "negative"}},
		{"engine path without slash", "scrape:\n  enginePaths:\n    sglang: metrics\n", []string{"scrape.enginePaths.sglang"}},
		{"prune target above 1", "kv:\n  pruneTarget: 1.5\n", []string{"kv.pruneTarget"}},
		{"host weight above 1", "kv:\n  hostHitWeight: 1.5\n", []string{"kv.hostHitWeight", "1.5"}},
		{"negative disk weight", "kv:\n  diskHitWeight: -0.1\n", []string{"kv.diskHitWeight"}},
		{"tier weights in range", "kv:\n  hostHitWeight: 1\n  diskHitWeight: 0\n", nil},
		{"replica sync peers", "replicaSync:\n  mode: peers\n  queueLength: 16\n  orphanTTL: 1m\n", nil},
		{"replica sync unknown mode", "replicaSync:\n  mode: gossip\n", []string{"replicaSync.mode", "gossip"}},
		{"replica sync queue order", "replicaSync:\n  queueOrder: global\n  queueYield: -1s\n", []string{"replicaSync.queueOrder", "global", "replicaSync.queueYield"}},
		{"replica sync negative queue slack", "replicaSync:\n  queueSlack: -5ms\n", []string{"replicaSync.queueSlack", "negative"}},
		{"replica sync queue slack", "replicaSync:\n  queueSlack: 2ms\n", nil},
		{"replica sync negative queue slack max", "replicaSync:\n  queueSlackMax: -1ms\n", []string{"replicaSync.queueSlackMax", "negative"}},
		{"replica sync fixed queue slack", "replicaSync:\n  queueSlack: 8ms\n  queueSlackMax: 8ms\n", nil},
		{"replica sync bad numbers", "replicaSync:\n  queueLength: -1\n  maxBatch: -2\n  snapshotChains: -3\n  orphanTTL: -1s\n",
			[]string{"replicaSync.queueLength", "replicaSync.maxBatch", "replicaSync.snapshotChains", "replicaSync.orphanTTL"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.yaml))
			if err == nil {
				c.SetDefaults()
				err = c.Validate()
			}
			if tc.name == "several problems at once" {
				if err == nil {
					t.Fatal("want errors")
				}
				for _, want := range []string{"router.fallbacks", "kv.observation"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q lacks %q", err, want)
					}
				}
				return
			}
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want error containing %v", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestFlagBindings(t *testing.T) {
	cases := []struct {
		name    string
		yaml    string
		args    []string
		wantErr string
		check   func(*Config) bool
	}{
		{"flag fills unset field", "", []string{"--router-kv-overlap-score-weight=2.5", "--router-mode=kv"}, "",
			func(c *Config) bool { return *c.Router.KVCost.OverlapWeight == 2.5 && c.Router.Mode == "kv" }},
		{"flag agrees with file", "router:\n  kvCost:\n    temperature: 0.5\n", []string{"--router-temperature=0.5"}, "",
			func(c *Config) bool { return *c.Router.KVCost.Temperature == 0.5 }},
		{"flag disagrees with file", "admission:\n  queueThreshold: 0.8\n", []string{"--router-queue-threshold=0.5"},
			"--router-queue-threshold=0.5 disagrees with config field admission.queueThreshold=0.8", nil},
		{"no events flag", "", []string{"--no-router-kv-events"}, "",
			func(c *Config) bool { return c.KV.Observation == ObservePredicted }},
		{"no events vs file events", "kv:\n  observation: events\n", []string{"--no-router-kv-events"}, "kv.observation=events", nil},
		{"bad number", "", []string{"--active-prefill-tokens-threshold=lots"}, "not an integer", nil},
		{"int threshold", "", []string{"--active-prefill-tokens-threshold=10000"}, "",
			func(c *Config) bool { return *c.Router.Busy.ActivePrefillTokens == 10000 }},
		{"router-mode kv alone means auto: events where the engines publish, as Dynamo's --router-kv-events defaults on", "",
			[]string{"--router-mode", "kv"}, "", func(c *Config) bool { c.SetDefaults(); return c.KV.Observation == ObserveAuto }},
		{"router-mode kv with no events", "", []string{"--router-mode", "kv", "--no-router-kv-events"}, "",
			func(c *Config) bool { return c.KV.Observation == ObservePredicted }},
		{"router-mode kv keeps the file's observation", "kv:\n  observation: predicted\n", []string{"--router-mode=kv"}, "",
			func(c *Config) bool { return c.KV.Observation == ObservePredicted }},
		{"obsolete --kv-events", "", []string{"--kv-events"}, "", func(c *Config) bool { return c.KV.Observation == ObserveEvents }},
		{"obsolete --kv-overlap-score-weight", "", []string{"--kv-overlap-score-weight", "0.5"}, "",
			func(c *Config) bool { return *c.Router.KVCost.OverlapWeight == 0.5 }},
		{"prefill load scale and overlap weight disagree", "", []string{"--router-prefill-load-scale=2", "--router-kv-overlap-score-weight=1"},
			"disagrees with config field router.kvCost.overlapWeight", nil},
		{"ttl alias in seconds", "", []string{"--router-ttl", "45.5"}, "",
			func(c *Config) bool { return c.KV.PredictedTTL.Duration == 45500*time.Millisecond }},
		{"ttl secs", "", []string{"--router-ttl-secs=30"}, "", func(c *Config) bool {
			return c.KV.PredictedTTL.Duration == 30*time.Second && c.KV.PredictedTTLKnownCapacity.Duration == 30*time.Second
		}},
		{"ttl secs keeps the file's known-capacity ttl", "kv:\n  predictedTTLKnownCapacity: 15m\n", []string{"--router-ttl-secs=30"}, "",
			func(c *Config) bool {
				return c.KV.PredictedTTL.Duration == 30*time.Second && c.KV.PredictedTTLKnownCapacity.Duration == 15*time.Minute
			}},
		{"max tree size and prune ratio", "", []string{"--router-max-tree-size=4096", "--router-prune-target-ratio=0.5"}, "",
			func(c *Config) bool { return c.KV.MaxBlocksPerEndpoint == 4096 && *c.KV.PruneTarget == 0.5 }},
		{"queue threshold 0", "", []string{"--router-queue-threshold=0"}, "",
			func(c *Config) bool { return c.Admission.QueueThreshold != nil && *c.Admission.QueueThreshold == 0 }},
		{"queue threshold None", "", []string{"--router-queue-threshold=None"}, "",
			func(c *Config) bool { return c.Admission.QueueThreshold == nil && !*c.Admission.Queue }},
		{"queue threshold None vs file", "admission:\n  queueThreshold: 0.8\n", []string{"--router-queue-threshold=None"}, "disagrees", nil},
		{"queue policy fcfs", "", []string{"--router-queue-policy=fcfs"}, "", func(c *Config) bool { return c.Admission.QueuePolicy == QueueFCFS }},
		{"queue policy wspt", "", []string{"--router-queue-policy=wspt"}, "", func(c *Config) bool { return c.Admission.QueuePolicy == QueueWSPT }},
		{"queue policy unknown", "", []string{"--router-queue-policy=sjf"}, "must be one of [fcfs wspt]", nil},
		{"block size", "", []string{"--kv-cache-block-size=64"}, "", func(c *Config) bool { return c.KV.BlockSize == 64 }},
		{"tier weights", "", []string{"--router-host-cache-hit-weight=0.5", "--router-disk-cache-hit-weight=0.1"}, "",
			func(c *Config) bool { return *c.KV.HostHitWeight == 0.5 && *c.KV.DiskHitWeight == 0.1 }},
		{"busy frac None", "", []string{"--active-prefill-tokens-threshold-frac=None"}, "",
			func(c *Config) bool { return c.Router.Busy.ActivePrefillTokensFrac == nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			b := BindFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			c, err := Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			err = b.Apply(c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Fatalf("flag not applied: %+v", c)
			}
		})
	}
}

// TestDynamoFlagsWithoutCounterpartWarn: accepted, no config change, a
// warning naming each.
func TestDynamoFlagsWithoutCounterpartWarn(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	b := BindFlags(fs)
	args := []string{"--router-event-threads", "8", "--router-reset-states",
		"--shared-cache-type=hicache", "--no-router-track-active-blocks", "--router-approximate-cache-policy=lru"}
	if err := fs.Parse(args); err != nil {
		t.Fatalf("Dynamo flags refused: %v", err)
	}
	if fs.NArg() != 0 {
		t.Fatalf("flags left arguments unparsed: %v", fs.Args())
	}
	c := &Config{}
	if err := b.Apply(c); err != nil {
		t.Fatal(err)
	}
	w := b.Warnings()
	for _, name := range []string{"--router-event-threads", "--router-reset-states",
		"--shared-cache-type", "--no-router-track-active-blocks", "--router-approximate-cache-policy"} {
		if !slices.ContainsFunc(w, func(s string) bool { return strings.Contains(s, name) }) {
			t.Errorf("no warning names %s: %q", name, w)
		}
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

// A Dynamo flag kvpick accepts without effect still refuses a value Dynamo
// would refuse.
func TestIgnoredDynamoChoiceRefusesUnknownValue(t *testing.T) {
	for _, tc := range []struct {
		arg     string
		wantErr string
	}{
		{"--router-approximate-cache-policy=ttl", ""},
		{"--router-approximate-cache-policy=lru", ""},
		{"--router-approximate-cache-policy=arc", `must be one of [ttl lru], got "arc"`},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		BindFlags(fs)
		err := fs.Parse([]string{tc.arg})
		if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err %v, want %q", tc.arg, err, tc.wantErr)
		}
	}
}

// trtllm-serve's Prometheus text is at /prometheus/metrics; a user's own
// engine paths keep that default unless they name trtllm.
func TestScrapePathFor(t *testing.T) {
	c, err := Parse([]byte("scrape:\n  enginePaths:\n    sglang: /sg\n"))
	if err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	for engine, want := range map[string]string{"trtllm": "/prometheus/metrics", "sglang": "/sg", "vllm": "/metrics", "": "/metrics"} {
		if got := c.Scrape.PathFor(engine); got != want {
			t.Errorf("PathFor(%q) = %q, want %q", engine, got, want)
		}
	}
}

// TestQueueDefaults: kv mode queues (wspt, threshold 0.25) unless told not
// to; other modes queue only when a threshold is set.
func TestQueueDefaults(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	off, on := false, true
	tests := []struct {
		name      string
		mode      string
		queue     *bool
		threshold *float64
		want      *float64 // nil: queue off
	}{
		{"kv default", ModeKV, nil, nil, f(0.25)},
		{"kv threshold kept", ModeKV, nil, f(0.8), f(0.8)},
		{"kv turned off", ModeKV, &off, nil, nil},
		{"off wins over a threshold", ModeKV, &off, f(0.8), nil},
		{"round-robin default", ModeRoundRobin, nil, nil, nil},
		{"round-robin with a threshold", ModeRoundRobin, nil, f(0.5), f(0.5)},
		{"round-robin turned on", ModeRoundRobin, &on, nil, f(0.25)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{}
			c.Router.Mode, c.Admission.Queue, c.Admission.QueueThreshold = tt.mode, tt.queue, tt.threshold
			c.SetDefaults()
			got := c.Admission.QueueThreshold
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Fatalf("queueThreshold = %v, want %v", got, tt.want)
			}
			if c.Admission.QueuePolicy != QueueWSPT {
				t.Errorf("queuePolicy = %q, want wspt by default", c.Admission.QueuePolicy)
			}
			if l, w := c.Admission.LateAfterOrOff(), c.Admission.LateWindowOrNone(); l != 8*time.Second || w != 30*time.Second {
				t.Errorf("lateAfter, lateWindow = %v, %v, want 8s, 30s by default", l, w)
			}
			// The affinity threshold is on exactly when the queue is, at 1.0.
			if a := c.Admission.AffinityThreshold; (a == nil) != (got == nil) || (a != nil && *a != 1) {
				t.Errorf("affinityThreshold = %v with queueThreshold %v, want 1.0 exactly when queueing", a, got)
			}
			c.SetDefaults() // defaults are idempotent
			if again := c.Admission.QueueThreshold; (again == nil) != (got == nil) {
				t.Errorf("second SetDefaults changed the queue: %v then %v", got, again)
			}
		})
	}
}
