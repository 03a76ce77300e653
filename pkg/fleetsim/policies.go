package fleetsim

import (
	"fmt"
	"strings"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

// Policy names of the standard comparison.
const (
	PolicyRoundRobin  = "round-robin"
	PolicyRandom      = "random"
	PolicyLeastLoaded = "least-loaded"
	PolicyPowerOfTwo  = "power-of-two"
	PolicyKV          = "kv"          // kv mode, predicted observation
	PolicyKVObserved  = "kv-observed" // kv mode, KV events
	PolicyKVQueue     = "kv+queue"    // kv mode with queue admission
	PolicyGAIE        = "gaie-default"
	PolicySGLang      = "sglang-cache-aware"     // current launcher defaults
	PolicySGLangV04   = "sglang-cache-aware-v04" // the earlier defaults
	PolicyLeastQueue  = "least-queue"
)

// PolicyNames lists every standard policy in table order.
var PolicyNames = []string{PolicyRoundRobin, PolicyRandom, PolicyLeastLoaded, PolicyPowerOfTwo, PolicyKV,
	PolicyKVObserved, PolicyKVQueue, PolicyGAIE, PolicySGLang, PolicySGLangV04, PolicyLeastQueue}

// Options tune the standard policies.
type Options struct {
	// QueueThreshold is kv+queue's admission threshold (default 0.8, the brief's).
	QueueThreshold float64
	// OverlapWeight, when positive, overrides router.kvCost.overlapWeight in
	// the kv policies (kv, kv-observed, kv+queue); 0 keeps the default (1.0).
	OverlapWeight float64
	// CostModel, DecodeWeight, PrefillWeight, CommonHolders,
	// HotPrefixRequests, SessionLoad, PopularShare, PressureWindow and
	// BalanceBound, when set, override router.kvCost's model, decodeWeight,
	// prefillWeight, commonHolders, hotPrefixRequests, sessionLoad,
	// popularShare, prefillPressureWindow and balanceBound in the kv policies.
	CostModel         string
	DecodeWeight      *float64
	PrefillWeight     *float64
	CommonHolders     *int
	HotPrefixRequests *int
	SessionLoad       *bool
	PopularShare      *float64
	PressureWindow    *time.Duration
	BalanceBound      *time.Duration
	// QueuePolicy, when set, overrides admission.queuePolicy in the kv
	// policies; KVQueueThreshold, when set, overrides admission.queueThreshold
	// in kv and kv-observed (kv+queue keeps QueueThreshold); negative turns
	// their queue off.
	QueuePolicy      string
	KVQueueThreshold *float64
	// QueueLateAfter, when set, overrides admission.lateAfter in the kv
	// policies (0: off).
	QueueLateAfter *time.Duration
	// QueueLateWindow, when set, overrides admission.lateWindow in the kv
	// policies.
	QueueLateWindow *time.Duration
	// EventsBridge, when set, overrides kv.eventsBridge in the kv policies.
	EventsBridge *bool
	// ReplicaQueueOrder, when set, overrides replicaSync.queueOrder in the
	// kv policies (it matters only with several synced replicas).
	ReplicaQueueOrder string
	// ReplicaQueueSlack, when set, overrides replicaSync.queueSlack in the
	// kv policies.
	ReplicaQueueSlack *time.Duration
	// ReplicaQueueSlackMax, when set, overrides replicaSync.queueSlackMax.
	ReplicaQueueSlackMax *time.Duration
	// PredictedTTL, when positive, overrides kv.predictedTTL and
	// kv.predictedTTLKnownCapacity in the kv policies (the simulated engines
	// report their capacity, so the latter is the one in use).
	PredictedTTL time.Duration
}

// Standard returns the named standard policies (all when names is empty).
func Standard(names []string, o Options) ([]Spec, error) {
	if o.QueueThreshold <= 0 {
		o.QueueThreshold = 0.8
	}
	if len(names) == 0 {
		names = PolicyNames
	}
	var out []Spec
	for _, n := range names {
		sp, ok := standard(strings.TrimSpace(n), o)
		if !ok {
			return nil, fmt.Errorf("unknown policy %q (known: %s)", n, strings.Join(PolicyNames, ", "))
		}
		out = append(out, sp)
	}
	return out, nil
}

func standard(name string, o Options) (Spec, bool) {
	mode := func(m string) Spec { return KVPick(name, func(c *v1.Config) { c.Router.Mode = m }) }
	kv := func(mut func(*v1.Config)) Spec {
		return KVPick(name, func(c *v1.Config) {
			c.Router.Mode = v1.ModeKV
			if w := o.OverlapWeight; w > 0 {
				c.Router.KVCost.OverlapWeight = &w
			}
			c.Router.KVCost.Model, c.Router.KVCost.DecodeWeight, c.Router.KVCost.PrefillWeight = o.CostModel, o.DecodeWeight, o.PrefillWeight
			c.Router.KVCost.CommonHolders, c.Router.KVCost.HotPrefixRequests = o.CommonHolders, o.HotPrefixRequests
			c.Router.KVCost.PopularShare, c.Router.KVCost.SessionLoad = o.PopularShare, o.SessionLoad
			if o.PressureWindow != nil {
				c.Router.KVCost.PrefillPressureWindow = &v1.Duration{Duration: *o.PressureWindow}
			}
			if o.BalanceBound != nil {
				c.Router.KVCost.BalanceBound = &v1.Duration{Duration: *o.BalanceBound}
			}
			c.Admission.QueuePolicy = o.QueuePolicy
			if l := o.QueueLateAfter; l != nil {
				c.Admission.LateAfter = &v1.Duration{Duration: *l}
			}
			if l := o.QueueLateWindow; l != nil {
				c.Admission.LateWindow = &v1.Duration{Duration: *l}
			}
			c.KV.EventsBridge = o.EventsBridge
			if o.PredictedTTL > 0 {
				c.KV.PredictedTTL = v1.Duration{Duration: o.PredictedTTL}
				c.KV.PredictedTTLKnownCapacity = c.KV.PredictedTTL
			}
			c.ReplicaSync.QueueOrder = o.ReplicaQueueOrder
			if s := o.ReplicaQueueSlack; s != nil {
				c.ReplicaSync.QueueSlack = v1.Duration{Duration: *s}
			}
			if s := o.ReplicaQueueSlackMax; s != nil {
				c.ReplicaSync.QueueSlackMax = v1.Duration{Duration: *s}
			}
			if t := o.KVQueueThreshold; t != nil {
				on := *t >= 0
				c.Admission.Queue = &on
				if on {
					c.Admission.QueueThreshold = t
				}
			}
			mut(c)
		})
	}
	switch name {
	case PolicyRoundRobin, PolicyRandom, PolicyLeastLoaded, PolicyPowerOfTwo:
		return mode(name), true
	case PolicyKV: // the predicted path: the simulated engines publish events only for kv-observed
		return kv(func(c *v1.Config) { c.KV.Observation = v1.ObservePredicted }), true
	case PolicyKVObserved:
		return kv(func(c *v1.Config) { c.KV.Observation = v1.ObserveEvents }), true
	case PolicyKVQueue:
		t := o.QueueThreshold
		return kv(func(c *v1.Config) { c.Admission.Queue, c.Admission.QueueThreshold = nil, &t }), true
	case PolicyGAIE:
		return GAIEDefault(name, GAIEOptions{}), true
	case PolicyLeastQueue:
		return profile(name, v1.WeightedName{Name: v1.ScorerQueueDepth, Weight: 1}), true
	case PolicySGLang:
		return SGLangCacheAware(name, SGLangOptions{}), true
	case PolicySGLangV04:
		return SGLangCacheAware(name, SGLangV04Options()), true
	}
	return Spec{}, false
}

// profile is a custom max-score profile on the predicted observation path
// (what the Gateway API Inference Extension's approximate prefix scorer does:
// it learns from its own routing decisions).
func profile(name string, scorers ...v1.WeightedName) Spec {
	return KVPick(name, func(c *v1.Config) {
		c.Router.Mode = v1.ModeCustom
		c.Router.Profile = &v1.Profile{Scorers: scorers, Picker: v1.PickerMaxScore}
		c.KV.Observation = v1.ObservePredicted
	})
}
