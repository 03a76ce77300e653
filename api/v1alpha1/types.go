// Package v1alpha1 holds kvpick's configuration API: the YAML file given with
// --config, its defaults and its validation. Every tunable lives here with its
// default and a note on what it trades.
package v1alpha1

// Router modes.
const (
	ModeRoundRobin  = "round-robin"
	ModeRandom      = "random"
	ModeLeastLoaded = "least-loaded"
	ModePowerOfTwo  = "power-of-two"
	ModeKV          = "kv"
	ModeDirect      = "direct"
	ModeDeviceAware = "device-aware-weighted"
	ModeCustom      = "custom" // the profile in router.profile
)

// MetricsOff as server.metricsAddr turns the metrics listener off.
const MetricsOff = "off"

// Tokenizers for kv.tokenizer.
const (
	TokenizerBytes       = "bytes"
	TokenizerApproximate = "approximate"
	TokenizerRemote      = "remote"
)

// Tokenizers lists the kv.tokenizer values.
var Tokenizers = []string{TokenizerBytes, TokenizerApproximate, TokenizerRemote}

// Observation paths for the KV index.
const (
	ObservePredicted = "predicted" // the picker's own decisions, with a TTL
	ObserveEvents    = "events"    // engines' KV events over ZMQ
	// ObserveAuto chooses per endpoint: events while it publishes them, predicted otherwise.
	ObserveAuto = "auto"
)

// Observations lists the kv.observation values.
var Observations = []string{ObserveAuto, ObserveEvents, ObservePredicted}

// Config is the whole picker configuration.
type Config struct {
	Server    Server    `json:"server"`
	Endpoints Endpoints `json:"endpoints"`
	Router    Router    `json:"router"`
	Admission Admission `json:"admission"`
	KV        KV        `json:"kv"`
	Scrape    Scrape    `json:"scrape"`
	// Kubernetes configures Kubernetes mode (see kube.go).
	Kubernetes Kubernetes `json:"kubernetes"`
	// ReplicaSync shares in-flight work between picker replicas (see replicasync.go).
	ReplicaSync ReplicaSync `json:"replicaSync"`
	// Objectives maps an InferenceObjective name (header x-gateway-inference-objective)
	// to its priority. Higher goes first; negative is sheddable. Unknown names get 0.
	Objectives map[string]int `json:"objectives,omitempty"`
}

// Server configures the gRPC and metrics listeners.
type Server struct {
	// GRPCAddr is the ext_proc listen address (default ":9002", the port the ecosystem uses).
	GRPCAddr string `json:"grpcAddr"`
	// MetricsAddr serves /metrics, /healthz and /readyz (default ":9090"); "off" disables it.
	MetricsAddr string `json:"metricsAddr"`
	// Plaintext turns TLS off on the gRPC listener. Off by default: Envoy Gateway talks TLS to pickers.
	Plaintext bool `json:"plaintext"`
	// CertFile and KeyFile are the TLS certificate; when empty a self-signed one is generated at start.
	CertFile string `json:"certFile,omitempty"`
	KeyFile  string `json:"keyFile,omitempty"`
	// MaxBodyBytes bounds a request body (default 32 MiB). Larger bodies get 413;
	// raising it raises the memory one request may hold.
	MaxBodyBytes int64 `json:"maxBodyBytes"`
	// ShutdownGrace is how long in-flight streams may finish on SIGTERM (default 30s).
	ShutdownGrace Duration `json:"shutdownGrace"`
	// GCPercent is the Go collector's heap growth target (GOGC) for the process (default 400). Higher means
	// fewer collections, so fewer stalls in the tail of decision latency, for a larger heap: about
	// live × (1 + GCPercent/100). -1 collects only near MemoryLimitBytes (which must then be set). The GOGC
	// environment variable, when set, wins.
	GCPercent *int `json:"gcPercent"`
	// MemoryLimitBytes is the soft memory limit (GOMEMLIMIT): the collector works harder near it, so a high
	// GCPercent cannot grow the heap past the pod's memory. 0 (default) means 90% of the container's cgroup
	// memory limit when there is one (the GOMEMLIMIT environment variable, when set, wins), else none.
	MemoryLimitBytes int64 `json:"memoryLimitBytes"`
}

// Endpoints says where the candidate set comes from.
type Endpoints struct {
	// File is a YAML endpoints file (standalone mode), reloaded when it changes.
	File string `json:"file,omitempty"`
	// ReloadInterval is how often File is checked for changes (default 2s).
	ReloadInterval Duration `json:"reloadInterval"`
}

// Router configures selection.
type Router struct {
	// Mode is the router mode (default "kv").
	Mode string `json:"mode"`
	// Fallbacks is how many fallback endpoints follow the primary in the
	// destination list (default 2). More gives Envoy more retry targets but
	// retries may land on colder caches.
	Fallbacks *int `json:"fallbacks,omitempty"`
	// OverrideHeader names the endpoint in direct mode (default
	// "x-gateway-destination-endpoint-override").
	OverrideHeader string `json:"overrideHeader"`
	// WorkerHeaders also sets x-worker-instance-id (the endpoint's workerId, a Dynamo instance id: start-up
	// refuses endpoints without a numeric one), x-dp-rank and x-data-parallel-rank (its dpRank) for a Dynamo
	// frontend in direct mode behind the gateway (default off).
	WorkerHeaders bool `json:"workerHeaders"`
	// Seed makes random choices reproducible; 0 seeds from the clock.
	Seed int64 `json:"seed,omitempty"`

	KVCost      KVCost      `json:"kvCost"`
	Busy        Busy        `json:"busy"`
	Session     Session     `json:"session"`
	LoRA        LoRA        `json:"lora"`
	DeviceAware DeviceAware `json:"deviceAware"`
	// Profile is a user-composed scheduler, used when Mode is "custom".
	Profile *Profile `json:"profile,omitempty"`
}

// KVCost configures the kv mode's cost model. Model "time" (default) is the
// predicted time in seconds: the request's time to first token on the
// endpoint plus prefillWeight times its own prefill time plus decodeWeight
// times the decode slowdown it and the endpoint's running requests cause
// each other (its prefill stalling their steps included); model "blocks" is
// Dynamo's formula, cost = overlapWeight*prefillTokens/blockSize +
// decodeBlocks + activeRequestWeight*activeRequests.
type KVCost struct {
	// Model is "time" (default) or "blocks" (Dynamo's exact behaviour).
	Model string `json:"model"`
	// PrefillWeight counts the request's own prefill time again in the
	// time model, this many times (default 2): the GPU time it takes delays
	// every request that arrives behind it at that endpoint, which its own
	// TTFT misses. Higher keeps prefixes where they are cached (fewer
	// copies and the evictions they cause), at the price of balance where
	// prompts share little (routebench, 2 against 1: shared-prefix at 25
	// req/s over 16,000 requests p95 5 % lower, the grid's shared-prefix and
	// burst p95 1.4-3.4 % lower, the Mooncake trace's end-to-end p99 4 %
	// higher; 3 moves shared-prefix a little more and the trace's end to end
	// 7 %); 0 judges by this request's TTFT alone and moves prefixes more. A
	// session's first request counts it once whatever the weight: its later
	// turns follow it, so their load, not a one-off cache saving, is what
	// its placement decides.
	PrefillWeight *float64 `json:"prefillWeight,omitempty"`
	// DecodeWeight scales the time model's decode term (default 0.2; a
	// session's first request carries its later requests' decode, as they
	// will follow it). Higher spreads decode load (ITL, end-to-end latency)
	// at the cost of cache affinity (TTFT): at 0.5 and above shared prefixes
	// move off the endpoints that hold them; at 0.1 affinity crowds sessions
	// onto few endpoints.
	DecodeWeight *float64 `json:"decodeWeight,omitempty"`
	// CommonHolders is how many endpoints must hold a prefix for it to count
	// as common (default 2; 0: never). The time model does not charge
	// prefillWeight for computing a common prefix on one more endpoint
	// (its time to first token still counts it): that is paid once and
	// spreads the traffic that needs the prefix (a system prompt every
	// conversation starts with), where recomputing a prefix one endpoint
	// holds mostly duplicates work. Without it, new conversations crowd
	// onto the first endpoints that computed a shared system prompt
	// (routebench's multiturn without session ids: 3 of 8 endpoints took
	// 313 of the first 320 requests). Higher keeps common prefixes on fewer
	// endpoints.
	CommonHolders *int `json:"commonHolders,omitempty"`
	// HotPrefixRequests is how many requests in flight must share a prefix
	// on an endpoint holding it for the prefix to count as hot (default 3;
	// 0: never). The time model does not charge prefillWeight, nor the
	// stall of the batch, for computing a hot prefix on an endpoint with no
	// prefill queued that would answer no later than its busy holders
	// (unless requests wait in the admission queue): a second copy spares
	// the prefix's next requests the holders' queue (routebench's burst:
	// kv's p95 1.14 s to 0.98 s, seed 1-9 means). Lower copies prefixes
	// sooner, which many prefixes under load pay for in cache and prefill
	// (at 2, shared-prefix's p95 at 15 req/s rose 2 %); higher keeps a hot
	// prefix's requests queueing on one endpoint.
	HotPrefixRequests *int `json:"hotPrefixRequests,omitempty"`
	// SessionLoad (time model; default false) prices a session's first
	// request, which places the whole session (affinity pins its later
	// turns), by the load the session will bring: its decode term times the
	// requests a session sends, with the endpoint's pinned sessions counted
	// as running. That helps only while sessions pile up at the start of a
	// run (routebench's multiturn, 5,000 requests at 12 sessions/s, seeds
	// 1-30: end-to-end p99 3.7 % lower); once they come and go it holds first
	// turns back: over 20,000 requests kv's p95 / p99 are 14 / 22 % above
	// least-loaded's with it at 24 sessions/s and 1.9 / 1.8 % without, +5.1
	// / +7.2 % against -1.0 / -1.5 % at 18, -0.1 / -1.2 % against -2.7 /
	// -1.7 % at 12. Off, the first request's own prefill still counts once
	// (see PrefillWeight).
	SessionLoad *bool `json:"sessionLoad,omitempty"`
	// PopularShare (time model; default 0.15; 0: off): a prefix that drew at
	// least 8 requests and at least this share of one endpoint's worth of
	// the pool's requests over popularWindow (its share of the requests
	// times the endpoints) for each endpoint that holds it gets one more
	// holder: an endpoint with no prefill queued is judged as if it held the
	// prefix (but for the stall of its prefill on the running batch), so
	// the request that goes there computes it. With few prefixes an
	// endpoint, the first placement otherwise fixes each endpoint's load for
	// good, and a busy holder's requests have nowhere else to go
	// (routebench, 40 prefixes at 20 req/s, seeds 1-9: kv's p95 0.259 to
	// 0.233 s; since session 27, when the warm-up no longer waits a window,
	// 11 % lower again over seeds 1-30); a prefix drawing a third of the
	// traffic wants most of the pool (Zipf-skewed prefixes, -prefix-zipf).
	// Lower copies less popular prefixes, at the price of one uncached
	// prefill each (where first computations are about 1 % of the requests
	// the copies fill the p99 of a short run: 45 prefixes of 2,000 tokens
	// over 200 s, p99 +48 % against SGLang's older defaults, where four
	// times as long gives -21 %); higher leaves hot prefixes on too few
	// endpoints.
	PopularShare *float64 `json:"popularShare,omitempty"`
	// PopularWindow is the time constant of popularShare's request counts
	// (default 60s). Longer judges popularity on steadier counts and copies
	// later; the 8-request floor, not the window, keeps a warm-up's first
	// arrivals from making prefixes look popular.
	PopularWindow *Duration `json:"popularWindow,omitempty"`
	// PrefillPressureWindow (time model; default 30s; "0s": off) averages
	// each endpoint's uncached prompt tokens dispatched per second (this
	// picker's and, with replica sync, its peers'). A request's decode on
	// an endpoint whose prefills take a share rho of its time stretches by
	// rho/(1-rho), as chunked prefill shares its steps; the time model adds
	// that to the decode term (weighed by decodeWeight like the rest), as
	// it adds the stall the request's own prefill puts on the running
	// batch. Decoding requests then leave endpoints that take long cold
	// prompts (routebench's Mooncake trace, seeds 1-9: kv's end-to-end p99
	// 14.7 s to 11.1 s; p95 TTFT within 0.5 %). Shorter follows bursts of
	// long prompts sooner and forgets them sooner.
	PrefillPressureWindow *Duration `json:"prefillPressureWindow,omitempty"`
	// BalanceBound keeps cache affinity from making a hot spot, in either
	// model: an endpoint whose predicted TTFT exceeds the pool's best by more
	// than this is chosen only when nothing else is left (default 1s; "0s"
	// disables). Lower evens TTFT tails at the cost of prefix reuse.
	BalanceBound *Duration `json:"balanceBound,omitempty"`
	// Rates are the engine rates the time model starts from per endpoint,
	// before it learns each endpoint's own from what it observes.
	Rates CostRates `json:"rates"`
	// OverlapWeight scales the prefill term (default 1.0). Higher favours
	// cache hits (TTFT); lower favours spreading decode load (ITL).
	OverlapWeight *float64 `json:"overlapWeight,omitempty"`
	// Temperature > 0 samples softmax(-cost/T) over normalised costs instead of
	// taking the minimum (default 0). Some randomness avoids herding between
	// replicas that share no state; too much ignores the cost.
	Temperature *float64 `json:"temperature,omitempty"`
	// ActiveRequestWeight adds a per-request term (default 0), for engines whose
	// per-request overhead the token counts miss.
	ActiveRequestWeight *float64 `json:"activeRequestWeight,omitempty"`
}

// Busy thresholds exclude overloaded endpoints in every mode. They are
// opt-in (all off by default, as in Dynamo): a burst the engines can queue
// is routed, not refused. Nil disables one.
type Busy struct {
	// ActiveDecodeBlocks excludes an endpoint whose KV-holding work (blocks of
	// requests past their first token; one waiting in the engine's queue
	// holds none) exceeds this fraction of its total KV blocks (needs capacity).
	ActiveDecodeBlocks *float64 `json:"activeDecodeBlocks,omitempty"`
	// ActivePrefillTokens excludes an endpoint with more active prefill tokens than this.
	ActivePrefillTokens *int `json:"activePrefillTokens,omitempty"`
	// ActivePrefillTokensFrac excludes an endpoint with active prefill tokens
	// above this fraction of its max batched tokens.
	ActivePrefillTokensFrac *float64 `json:"activePrefillTokensFrac,omitempty"`
}

// Session pins a session to an endpoint.
type Session struct {
	// Header carrying the session id (default "x-session-id"); empty disables affinity.
	Header string `json:"header"`
	// TTL is the sliding idle time after which a pin is forgotten (default 10m).
	TTL Duration `json:"ttl"`
}

// LoRA configures adapter serving.
type LoRA struct {
	// Enabled restricts modes to kv, random and round-robin and folds the
	// adapter into block hashes.
	Enabled bool `json:"enabled"`
}

// DeviceAware configures device-aware-weighted mode.
type DeviceAware struct {
	// Label holds an endpoint's device group (default "kvpick.io/device").
	Label string `json:"label"`
	// Weights per group value (default gpu: 8, cpu: 1); unlisted groups weigh 1.
	Weights map[string]float64 `json:"weights,omitempty"`
}

// Admission configures the queue in front of selection.
type Admission struct {
	// Queue turns the admission queue on or off (default: on in kv mode,
	// and in any mode that sets queueThreshold; off otherwise). With it on,
	// a fleet that is full holds requests in the picker, where short ones can
	// pass long uncached documents (queuePolicy wspt), instead of in every
	// engine's first-come queue behind them.
	Queue *bool `json:"queue,omitempty"`
	// QueueThreshold (a fraction; default 0.25 when the queue is on) holds a
	// request while every eligible endpoint has active prefill tokens above
	// threshold x max batched tokens. Lower holds more in the picker's queue,
	// where it is ordered and placed afresh (0.25, about 2,000 tokens of
	// 8,192: an engine keeps one short prefill queued behind the running
	// one); higher hands more to the engines' own first-come queues, which a
	// long prompt blocks. 0 queues while every endpoint has any prefill.
	QueueThreshold *float64 `json:"queueThreshold,omitempty"`
	// AffinityThreshold (a fraction; default 1.0 when the queue is on; kv
	// mode only) is the threshold for a request some endpoint holds part of
	// cached: it
	// goes when the endpoint its cost picks has active prefill tokens, plus
	// those reserved there, at or under threshold x max batched tokens,
	// and then to that endpoint; a request no endpoint holds cached goes to
	// the cheapest endpoint under queueThreshold. Without it a request
	// passed on one endpoint's room and went to another, where it queued in
	// the engine behind a long prefill instead of in the picker, where
	// shorter work passes longer (1.0: the endpoint starts it within about
	// one engine step). Higher hands more cache hits to the engines' own
	// first-come queues; lower holds them in the picker even where they
	// would start at once. Requests with a session keep queueThreshold's
	// pool-wide rule (their endpoint is the session's).
	AffinityThreshold *float64 `json:"affinityThreshold,omitempty"`
	// QueuePolicy orders waiting requests of one priority: "wspt" (default:
	// least uncached prompt first, prompts within a factor of about 1.4 in
	// arrival order; Dynamo's --router-queue-policy wspt) or "fcfs" (arrival
	// order). wspt lets short requests pass long uncached documents when the
	// fleet is full, lowering the mean and p95 wait at the cost of the long
	// ones' (bounded by maxQueueWait).
	QueuePolicy string `json:"queuePolicy,omitempty"`
	// MaxQueueLength bounds waiting requests (default 1024); past it: 429.
	MaxQueueLength int `json:"maxQueueLength"`
	// MaxQueueWait bounds one wait (default 30s); past it: 429.
	MaxQueueWait Duration `json:"maxQueueWait"`
	// LateAfter (default "8s"; "0s": off) is the wait past which a queued
	// request is late: it yields to requests of its priority and work class
	// that have waited less, until the last sixth of maxQueueWait (5 s of
	// 30 s), when it goes first again so that it is placed, not timed out.
	// A surge the fleet cannot clear at once then delays a few requests a
	// lot instead of every request after it a little (routebench
	// brief-import p99 9.1-10.0 s in arrival order, 7.05-7.31 s at 8s; the
	// late requests pay: the worst waited 27 s against 14 s). Lower keeps
	// more requests under it and makes the late ones wait longer (5s:
	// burst p99 worse than arrival order). Must be under five sixths of
	// maxQueueWait.
	LateAfter *Duration `json:"lateAfter,omitempty"`
	// LateWindow (default "30s"; "0s": no bound) ends lateAfter's tiers
	// while the queue has not drained for that long: a backlog that old is
	// a fleet at or past its capacity, not a surge it will clear, and there
	// a late request would yield to every newcomer until the urgent mark,
	// holding its memory meanwhile, so the queue keeps arrival order
	// instead. Longer keeps the tiers through longer surges (routebench's
	// brief-import backlog lasts 32-39 s, burst's 18 s: 30s keeps all of
	// the gain, 20s part, 10s none); shorter returns to arrival order
	// sooner under a standing queue.
	LateWindow *Duration `json:"lateWindow,omitempty"`
}

// KV configures tokens, hashing and the prefix index.
type KV struct {
	// Observation is the KV observation path:
	//   - "auto" (default): per endpoint, the events path while it publishes KV events (one arrived within
	//     EventsSilenceAfter), the predicted path (own decisions) otherwise; what Dynamo's --router-mode kv does
	//     where engines publish, without going load-only where they do not. Every block is indexed (stride 1).
	//   - "events": engine KV events only, for every endpoint.
	//   - "predicted": the picker's own decisions only.
	Observation string `json:"observation"`
	// EventsSilenceAfter is how long an endpoint may publish no KV event before it counts as silent (default
	// 1m): with "auto" it moves to the predicted path until events resume; with "events" the pool's silence is
	// reported. Shorter falls back sooner when a publisher dies, but an idle engine (no traffic, no events)
	// flips to predicted sooner too (harmless: its observed blocks stay, and its next events bring it back).
	EventsSilenceAfter Duration `json:"eventsSilenceAfter"`
	// UnmatchedAlarmAfter is how many requests in a row routed to an endpoint on the events path must find
	// their first block missing from its view before kvpick_kv_events_unmatched fires (default 8): one miss is
	// an eviction or a prompt shorter than a block, a run of them a hashing disagreement (block size,
	// tokenizer, model or adapter seed). Lower alarms sooner and more often by chance.
	UnmatchedAlarmAfter int `json:"unmatchedAlarmAfter"`
	// UnmatchedProbeSettle is how long a routed request has to reach its engine's cache before its first block
	// is looked up for that alarm (default 2s). Longer than a typical prefill, or slow prefills count as misses.
	UnmatchedProbeSettle Duration `json:"unmatchedProbeSettle"`
	// BlockSize is the token block size when an endpoint does not report one (default 16). An endpoint's own
	// size comes from its KV events' block_size, else its configured or scraped capacity (vLLM
	// cache_config_info block_size, SGLang page_size); a request is hashed once per distinct size in the pool.
	BlockSize int `json:"blockSize"`
	// EventsBridge (default false: events alone, Dynamo's behaviour) counts, on an endpoint on the events path,
	// the prefix of a request just routed there as cached from the decision until the request's first token, when
	// the engine has reported the blocks it stored: without it a request arriving in between (the engine's queue
	// plus the events' delay) does not see the prefix and computes it again elsewhere, which a cold start with
	// many new prefixes pays at p99 (routebench shared-prefix at 25 req/s: p99 1.58-2.20 s to 1.22-1.90 s).
	// Blocks the engine reported by then stay; the rest are taken back. It costs index work per request on every
	// replica (peers claim too), and the real-time soak was worse with it on this 2-core host (not attributed
	// cleanly: its runs vary), so it is opt-in until measured on real hardware.
	EventsBridge *bool `json:"eventsBridge,omitempty"`
	// PredictedTTL expires predicted entries on an endpoint whose KV capacity is unknown (default 120s,
	// Dynamo's --router-ttl-secs): the index's only bound there is maxBlocksPerEndpoint, far above what an
	// engine holds, so the TTL stands in for its evictions. Longer keeps affinity for slower-returning
	// prefixes but predicts blocks the engine evicted.
	PredictedTTL Duration `json:"predictedTTL"`
	// PredictedTTLKnownCapacity expires predicted entries on an endpoint whose KV capacity is known (scraped:
	// vLLM's num_gpu_blocks, SGLang's num_pages, TensorRT-LLM's max blocks; or the endpoints file; default 600s). There the index is bounded by the engine's blocks
	// and drops the least recently used first, as the engine evicts, so the TTL only guards against traffic
	// this picker never saw evicting them. Shorter forgets prefixes the engine still holds: at 120s, on
	// routebench's Mooncake trace, kv sent requests whose prefix an engine still held 88-337 s after its last
	// use elsewhere (p95 3.571 s against 3.543 s at 600s, seeds 1-9; 3,600s measured the same as 600s).
	// Longer makes replica sync's snapshots carry more (up to replicaSync.snapshotChains).
	PredictedTTLKnownCapacity Duration `json:"predictedTTLKnownCapacity"`
	// PredictedStride indexes every Nth block of a prompt on the predicted path (default 4: 64 tokens with
	// blockSize 16). Block hashes are chained, so one hash stands for the whole prefix before it: lookups,
	// records and index memory cost 1/N, and a shared prefix is credited in steps of N blocks (up to N-1
	// blocks of a match go uncredited). 1 indexes every block. The events path always indexes every block.
	PredictedStride int `json:"predictedStride"`
	// MaxBlocksPerEndpoint bounds index entries when an endpoint's capacity is unknown (default 1048576).
	MaxBlocksPerEndpoint int `json:"maxBlocksPerEndpoint"`
	// PruneTarget is the fraction of an endpoint's bound kept when the index prunes it (default 1.0: drop only
	// the excess, least recently used first, as the engine evicts; Dynamo's --router-prune-target-ratio
	// defaults to 0.8). The bound is the engine's KV blocks when known, so a lower value forgets prefixes the
	// engine still holds (on the Mooncake trace 0.8 cut kv's prefix hit from 0.269 to 0.250); it only makes
	// pruning rarer, and each eviction costs O(1) here either way.
	PruneTarget *float64 `json:"pruneTarget,omitempty"`
	// ActiveWorkTTL frees in-flight accounting the lifecycle never closed (default 300s).
	ActiveWorkTTL Duration `json:"activeWorkTTL"`
	// Tokenizer turns prompts into the tokens that are hashed into blocks:
	//   - "bytes" (default with observation "predicted"; refused with "events" and "auto"): 4 bytes of text per token, so a block is 64 bytes. The
	//     predicted index only holds this picker's own chains, so block boundaries need not be the engine's;
	//     tokenizing 32 KB costs under a microsecond instead of tens. Token counts are estimated as bytes/4.
	//   - "approximate" (default with observation "events" and "auto"): the vocabulary-free splitter modelsim also uses;
	//     needed to match an engine's KV events, which hash real token ids.
	//   - "remote": the model server's /tokenize (exact, one HTTP call per request on the decision path).
	Tokenizer string `json:"tokenizer"`
	// TokenizerTimeout bounds one request's "remote" tokenization across every endpoint tried (default 1s);
	// past it the approximation is used. Longer waits out a slow server on the decision path; shorter falls
	// back to inexact tokens (only cache credit is lost) sooner.
	TokenizerTimeout Duration `json:"tokenizerTimeout"`
	// EventsPort is the ZMQ port of each endpoint's KV event publisher (default 5557), used when observation is
	// "events". An endpoint with a dpRank subscribes at EventsPort + dpRank, where vLLM and SGLang put each
	// data-parallel rank's publisher.
	EventsPort int `json:"eventsPort"`
	// HostHitWeight credits a prompt block an engine holds only in its host (CPU) tier as this fraction of a
	// GPU hit, on the events path (default 0.75, as Dynamo's --router-host-cache-hit-weight). Higher sends more
	// requests to where an offloaded prefix can be copied back; lower treats a reload as nearly a recompute.
	HostHitWeight *float64 `json:"hostHitWeight,omitempty"`
	// DiskHitWeight is HostHitWeight for the disk (and external) tier (default 0.25, as Dynamo's
	// --router-disk-cache-hit-weight).
	DiskHitWeight *float64 `json:"diskHitWeight,omitempty"`
}

// Scrape configures model-server metrics polling.
type Scrape struct {
	// Disabled turns scraping off; load then comes only from this picker's own accounting.
	Disabled bool `json:"disabled"`
	// Interval between scrapes of one endpoint (default 100ms). Shorter sees load sooner at more scrape cost.
	Interval Duration `json:"interval"`
	// Timeout of one scrape (default 1s).
	Timeout Duration `json:"timeout"`
	// StaleAfter distrusts a sample older than this (default 2s).
	StaleAfter Duration `json:"staleAfter"`
	// ExcludeAfter consecutive failures exclude an endpoint (default 5).
	ExcludeAfter int `json:"excludeAfter"`
	// Path of the metrics page for engines without an entry in EnginePaths (default "/metrics").
	Path string `json:"path"`
	// EnginePaths maps an endpoint's engine (vllm, sglang, trtllm, triton) to its metrics page (default
	// trtllm: "/prometheus/metrics", where trtllm-serve serves Prometheus text, and only with
	// return_perf_metrics on; its /metrics is JSON iteration stats). An endpoint's metricsPath overrides both.
	EnginePaths map[string]string `json:"enginePaths,omitempty"`
}

// PathFor is the metrics page of an endpoint of engine that names none itself.
func (s *Scrape) PathFor(engine string) string {
	if p, ok := s.EnginePaths[engine]; ok {
		return p
	}
	return s.Path
}

// Profile composes a scheduler from plugins.
type Profile struct {
	Filters []string       `json:"filters,omitempty"`
	Scorers []WeightedName `json:"scorers"`
	// Picker is one of lowest-cost, max-score, softmax, random, round-robin.
	Picker string `json:"picker"`
	// Temperature for the softmax picker.
	Temperature float64 `json:"temperature,omitempty"`
}

// WeightedName is a scorer and its weight.
type WeightedName struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
}
