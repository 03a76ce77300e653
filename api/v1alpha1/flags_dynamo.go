package v1alpha1

import (
	"fmt"
	"strconv"
)

// Queue orders (admission.queuePolicy), as Dynamo's --router-queue-policy
// spells them.
const (
	QueueFCFS = "fcfs"
	QueueWSPT = "wspt"
)

// QueuePolicies are the admission.queuePolicy values.
var QueuePolicies = []string{QueueFCFS, QueueWSPT}

// dynamo registers NVIDIA Dynamo's router flags as its frontend spells them
// today (components/src/dynamo/common/configuration/groups/router_args.py
// and kv_router_args.py), with the obsolete aliases scripts still use.
func (b *FlagBindings) dynamo() {
	names := func(n ...string) []string { return n }
	b.str(names("router-mode"), "router.mode", "router mode: "+fmt.Sprint(Modes), func(c *Config) *string { return &c.Router.Mode })
	b.observation(names("router-kv-events", "kv-events"), true)
	b.observation(names("no-router-kv-events", "no-kv-events"), false)
	b.float(names("router-kv-overlap-score-weight", "kv-overlap-score-weight"), "router.kvCost.overlapWeight",
		"weight of the prefill term in the kv cost (Dynamo: deprecated for --router-prefill-load-scale)", false,
		func(c *Config) **float64 { return &c.Router.KVCost.OverlapWeight })
	b.float(names("router-prefill-load-scale"), "router.kvCost.overlapWeight", "scale of the prefill term in the kv cost", false,
		func(c *Config) **float64 { return &c.Router.KVCost.OverlapWeight })
	b.float(names("router-temperature"), "router.kvCost.temperature", "softmax temperature of the kv picker (0 = lowest cost)", false,
		func(c *Config) **float64 { return &c.Router.KVCost.Temperature })
	b.float(names("router-decode-active-request-weight"), "router.kvCost.activeRequestWeight", "per-active-request term in the kv cost", false,
		func(c *Config) **float64 { return &c.Router.KVCost.ActiveRequestWeight })
	b.seconds(names("router-ttl-secs", "router-ttl"), "kv.predictedTTL", "lifetime of a predicted block (predicted path; sets kv.predictedTTLKnownCapacity too)",
		func(c *Config) *Duration { return &c.KV.PredictedTTL }, func(c *Config) *Duration { return &c.KV.PredictedTTLKnownCapacity })
	b.intField(names("router-max-tree-size"), "kv.maxBlocksPerEndpoint", "bound on indexed blocks (kvpick bounds each endpoint)",
		func(c *Config) *int { return &c.KV.MaxBlocksPerEndpoint })
	b.float(names("router-prune-target-ratio"), "kv.pruneTarget", "fraction of the bound kept after pruning", false,
		func(c *Config) **float64 { return &c.KV.PruneTarget })
	b.queueThreshold()
	b.str(names("router-queue-policy"), "admission.queuePolicy", "queue order within a priority: fcfs or wspt (least uncached prompt first)",
		func(c *Config) *string { return &c.Admission.QueuePolicy }, QueuePolicies...)
	b.intField(names("kv-cache-block-size"), "kv.blockSize", "tokens per KV block", func(c *Config) *int { return &c.KV.BlockSize })
	b.float(names("active-decode-blocks-threshold"), "router.busy.activeDecodeBlocks", "busy when active decode blocks exceed this fraction of KV blocks (None: kvpick's default)", true,
		func(c *Config) **float64 { return &c.Router.Busy.ActiveDecodeBlocks })
	b.intp(names("active-prefill-tokens-threshold"), "router.busy.activePrefillTokens", "busy when active prefill tokens exceed this",
		func(c *Config) **int { return &c.Router.Busy.ActivePrefillTokens })
	b.float(names("active-prefill-tokens-threshold-frac"), "router.busy.activePrefillTokensFrac", "busy when active prefill tokens exceed this fraction of max batched tokens (None: off)", true,
		func(c *Config) **float64 { return &c.Router.Busy.ActivePrefillTokensFrac })
	b.float(names("router-host-cache-hit-weight"), "kv.hostHitWeight", "credit of a host-tier (CPU) prefix hit relative to a GPU hit", false,
		func(c *Config) **float64 { return &c.KV.HostHitWeight })
	b.float(names("router-disk-cache-hit-weight"), "kv.diskHitWeight", "credit of a disk-tier prefix hit relative to a GPU hit", false,
		func(c *Config) **float64 { return &c.KV.DiskHitWeight })
	b.replicaSync("router-replica-sync", true)
	b.replicaSync("no-router-replica-sync", false)
	b.dynamoIgnored()
}

// replicaSync binds Dynamo's negatable --router-replica-sync to
// replicaSync.mode (peers when on, off when off).
func (b *FlagBindings) replicaSync(name string, on bool) {
	usage := "share in-flight work with the peer replicas (replicaSync.mode: peers; peers from --peers or the Service)"
	if !on {
		usage = "do not share in-flight work with other replicas (replicaSync.mode: off)"
	}
	b.add([]string{name}, "replicaSync.mode", usage, true, func(c *Config, raw string) (string, error) {
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return "", fmt.Errorf("not a boolean: %q", raw)
		}
		want := ReplicaSyncOff
		if v == on {
			want = ReplicaSyncPeers
		}
		return setStrField(&c.ReplicaSync.Mode, want), nil
	})
}

// queueThreshold binds --router-queue-threshold: a number sets
// admission.queueThreshold (and turns the queue on), None turns it off
// (Dynamo's default; kvpick's kv mode queues unless told not to).
func (b *FlagBindings) queueThreshold() {
	b.add([]string{"router-queue-threshold"}, "admission.queueThreshold",
		"queue while every endpoint's active prefill tokens exceed this fraction of max batched tokens (None: no queue)", false,
		func(c *Config, raw string) (string, error) {
			if raw == "None" {
				if p := c.Admission.QueueThreshold; p != nil {
					return strconv.FormatFloat(*p, 'g', -1, 64), nil
				}
				c.Admission.Queue = ptr(false)
				return "", nil
			}
			v, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				return "", fmt.Errorf("not a number: %q", raw)
			}
			if p := c.Admission.QueueThreshold; p != nil && *p != v {
				return strconv.FormatFloat(*p, 'g', -1, 64), nil
			}
			c.Admission.QueueThreshold, c.Admission.Queue = &v, ptr(true)
			return "", nil
		})
}

// dynamoIgnored lists Dynamo router flags with no kvpick counterpart yet.
func (b *FlagBindings) dynamoIgnored() {
	b.ignore("kvpick credits the device overlap through the kv cost itself", false,
		"router-kv-overlap-score-credit", "router-kv-overlap-score-credit-decay")
	b.ignore("kvpick subscribes to engines' ZMQ publishers directly, without NATS", true,
		"router-durable-kv-events", "no-router-durable-kv-events", "durable-kv-events", "router-reset-states", "no-router-reset-states")
	b.ignore("kvpick always tracks active prefill tokens and decode blocks", true,
		"router-track-active-blocks", "no-router-track-active-blocks", "track-active-blocks",
		"router-track-output-blocks", "no-router-track-output-blocks", "track-output-blocks",
		"router-assume-kv-reuse", "no-router-assume-kv-reuse", "assume-kv-reuse",
		"router-track-prefill-tokens", "no-router-track-prefill-tokens", "load-aware", "no-load-aware",
		"enforce-disagg", "no-enforce-disagg", "use-remote-indexer", "no-use-remote-indexer", "serve-indexer", "no-serve-indexer")
	b.ignore("no counterpart in kvpick", false,
		"router-prefill-load-model", "router-snapshot-threshold", "router-policy-config", "router-event-threads",
		"shared-cache-multiplier", "shared-cache-type", "router-predicted-ttl-secs", "router-min-initial-workers", "admission-control")
	b.ignoreChoice("kvpick's predicted path bounds each endpoint's predictions by its engine's KV blocks where known, least "+
		"recently used first, and expires them after kv.predictedTTLKnownCapacity there and kv.predictedTTL (--router-ttl-secs) elsewhere",
		"router-approximate-cache-policy", "ttl", "lru")
}
