package v1alpha1

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// FieldError names the field a configuration problem is in.
type FieldError struct {
	Path   string
	Reason string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Reason }

type problems []error

func (p *problems) add(path, format string, args ...any) {
	*p = append(*p, &FieldError{Path: path, Reason: fmt.Sprintf(format, args...)})
}

// Modes lists every router mode, in documentation order.
var Modes = []string{ModeRoundRobin, ModeRandom, ModeLeastLoaded, ModePowerOfTwo, ModeKV, ModeDirect, ModeDeviceAware, ModeCustom}

// loraModes are the modes valid with LoRA serving; the others cannot honour
// adapter placement together with their own choice rule.
var loraModes = map[string]bool{ModeKV: true, ModeRandom: true, ModeRoundRobin: true}

// Validate reports every problem at once, each naming its field path.
// Call it after SetDefaults.
func (c *Config) Validate() error {
	var p problems
	c.Server.validate(&p)
	c.Router.validate(&p)
	c.Admission.validate(&p)
	c.KV.validate(&p)
	c.Scrape.validate(&p)
	c.Kubernetes.validate(&p)
	c.ReplicaSync.validate(&p)
	if c.Endpoints.ReloadInterval.Duration <= 0 {
		p.add("endpoints.reloadInterval", "must be positive")
	}
	return errors.Join(p...)
}

func (s *Server) validate(p *problems) {
	if s.GRPCAddr == "" {
		p.add("server.grpcAddr", "must not be empty")
	}
	if s.MaxBodyBytes < 1024 {
		p.add("server.maxBodyBytes", "must be at least 1024, got %d", s.MaxBodyBytes)
	}
	if (s.CertFile == "") != (s.KeyFile == "") {
		p.add("server.certFile", "certFile and keyFile must be set together")
	}
	if s.ShutdownGrace.Duration < 0 {
		p.add("server.shutdownGrace", "must not be negative")
	}
	if s.GCPercent != nil && *s.GCPercent < -1 {
		p.add("server.gcPercent", "must be -1 (off) or at least 0, got %d", *s.GCPercent)
	}
	if s.GCPercent != nil && *s.GCPercent == -1 && s.MemoryLimitBytes <= 0 {
		p.add("server.gcPercent", "-1 (collect only at the memory limit) needs server.memoryLimitBytes")
	}
	if s.MemoryLimitBytes < 0 {
		p.add("server.memoryLimitBytes", "must not be negative, got %d", s.MemoryLimitBytes)
	}
}

func (r *Router) validate(p *problems) {
	if !slices.Contains(Modes, r.Mode) {
		p.add("router.mode", "unknown mode %q (valid: %v)", r.Mode, Modes)
	}
	if r.LoRA.Enabled && !loraModes[r.Mode] {
		p.add("router.mode", "mode %q is not valid with LoRA serving (router.lora.enabled): only kv, random and round-robin are", r.Mode)
	}
	if r.Fallbacks != nil && (*r.Fallbacks < 0 || *r.Fallbacks > 16) {
		p.add("router.fallbacks", "must be between 0 and 16, got %d", *r.Fallbacks)
	}
	if r.Mode == ModeCustom && r.Profile == nil {
		p.add("router.profile", "required when mode is custom")
	}
	if r.Profile != nil {
		r.Profile.validate(p)
	}
	nonNeg(p, "router.kvCost.overlapWeight", r.KVCost.OverlapWeight)
	nonNeg(p, "router.kvCost.temperature", r.KVCost.Temperature)
	nonNeg(p, "router.kvCost.activeRequestWeight", r.KVCost.ActiveRequestWeight)
	r.KVCost.validateTime(p)
	nonNeg(p, "router.busy.activeDecodeBlocks", r.Busy.ActiveDecodeBlocks)
	nonNeg(p, "router.busy.activePrefillTokensFrac", r.Busy.ActivePrefillTokensFrac)
	if r.Busy.ActivePrefillTokens != nil && *r.Busy.ActivePrefillTokens < 0 {
		p.add("router.busy.activePrefillTokens", "must not be negative")
	}
	if r.Session.Header != "" && r.Session.TTL.Duration <= 0 {
		p.add("router.session.ttl", "must be positive")
	}
	for _, k := range sortedKeys(r.DeviceAware.Weights) {
		if r.DeviceAware.Weights[k] <= 0 {
			p.add("router.deviceAware.weights."+k, "must be positive")
		}
	}
}

func (pr *Profile) validate(p *problems) {
	for i, f := range pr.Filters {
		if !slices.Contains(FilterNames, f) {
			p.add(fmt.Sprintf("router.profile.filters[%d]", i), "unknown filter %q (valid: %v)", f, FilterNames)
		}
	}
	if len(pr.Scorers) == 0 && pr.Picker != PickerRandom && pr.Picker != PickerRoundRobin {
		p.add("router.profile.scorers", "at least one scorer is required for picker %q", pr.Picker)
	}
	for i, s := range pr.Scorers {
		if !slices.Contains(ScorerNames, s.Name) {
			p.add(fmt.Sprintf("router.profile.scorers[%d].name", i), "unknown scorer %q (valid: %v)", s.Name, ScorerNames)
		}
		if s.Weight <= 0 {
			p.add(fmt.Sprintf("router.profile.scorers[%d].weight", i), "must be positive")
		}
	}
	if !slices.Contains(PickerNames, pr.Picker) {
		p.add("router.profile.picker", "unknown picker %q (valid: %v)", pr.Picker, PickerNames)
	}
	if pr.Temperature < 0 {
		p.add("router.profile.temperature", "must not be negative")
	}
}

func (a *Admission) validate(p *problems) {
	if a.QueueThreshold != nil && !(*a.QueueThreshold >= 0) {
		p.add("admission.queueThreshold", "must not be negative (0 queues while every endpoint has any prefill; omit it to turn queueing off)")
	}
	if a.AffinityThreshold != nil && !(*a.AffinityThreshold >= 0) {
		p.add("admission.affinityThreshold", "must not be negative")
	}
	if !contains(QueuePolicies, a.QueuePolicy) {
		p.add("admission.queuePolicy", "must be one of %v, got %q", QueuePolicies, a.QueuePolicy)
	}
	if a.MaxQueueLength < 1 {
		p.add("admission.maxQueueLength", "must be at least 1")
	}
	if a.MaxQueueWait.Duration <= 0 {
		p.add("admission.maxQueueWait", "must be positive")
	}
	if l := a.LateAfterOrOff(); l < 0 {
		p.add("admission.lateAfter", "must not be negative (\"0s\" turns it off)")
	} else if w := a.MaxQueueWait.Duration; l > 0 && w > 0 && l >= w-w/6 {
		p.add("admission.lateAfter", "must be under five sixths of maxQueueWait (%v), got %v: a late request goes first again in the last sixth", w-w/6, l)
	}
	if a.LateWindow != nil && a.LateWindow.Duration < 0 {
		p.add("admission.lateWindow", "must not be negative (\"0s\": no bound)")
	}
}

func (k *KV) validate(p *problems) {
	if !slices.Contains(Observations, k.Observation) {
		p.add("kv.observation", "must be one of %v, got %q", Observations, k.Observation)
	}
	if k.EventsSilenceAfter.Duration <= 0 {
		p.add("kv.eventsSilenceAfter", "must be positive")
	}
	if k.UnmatchedAlarmAfter < 1 {
		p.add("kv.unmatchedAlarmAfter", "must be at least 1, got %d", k.UnmatchedAlarmAfter)
	}
	if k.UnmatchedProbeSettle.Duration <= 0 {
		p.add("kv.unmatchedProbeSettle", "must be positive")
	}
	if k.BlockSize < 1 || k.BlockSize > 4096 {
		p.add("kv.blockSize", "must be between 1 and 4096, got %d", k.BlockSize)
	}
	if k.PredictedStride < 1 || k.PredictedStride > 64 {
		p.add("kv.predictedStride", "must be in [1, 64], got %d", k.PredictedStride)
	}
	if k.PredictedTTL.Duration <= 0 {
		p.add("kv.predictedTTL", "must be positive")
	}
	if k.PredictedTTLKnownCapacity.Duration <= 0 {
		p.add("kv.predictedTTLKnownCapacity", "must be positive")
	}
	if k.MaxBlocksPerEndpoint < 1 {
		p.add("kv.maxBlocksPerEndpoint", "must be positive")
	}
	if k.ActiveWorkTTL.Duration <= 0 {
		p.add("kv.activeWorkTTL", "must be positive")
	}
	if !slices.Contains(Tokenizers, k.Tokenizer) {
		p.add("kv.tokenizer", "must be one of %v, got %q", Tokenizers, k.Tokenizer)
	}
	if k.Tokenizer == TokenizerBytes && k.Observation != ObservePredicted {
		p.add("kv.tokenizer", "%q cannot match KV events, which hash the engine's token ids: use %q or %q with observation %q, or set observation %q",
			TokenizerBytes, TokenizerApproximate, TokenizerRemote, k.Observation, ObservePredicted)
	}
	if k.TokenizerTimeout.Duration <= 0 {
		p.add("kv.tokenizerTimeout", "must be positive")
	}
	if k.EventsPort < 1 || k.EventsPort > 65535 {
		p.add("kv.eventsPort", "must be a port number, got %d", k.EventsPort)
	}
	if k.PruneTarget != nil && !(*k.PruneTarget > 0 && *k.PruneTarget <= 1) {
		p.add("kv.pruneTarget", "must be in (0, 1], got %g", *k.PruneTarget)
	}
	unit(p, "kv.hostHitWeight", k.HostHitWeight)
	unit(p, "kv.diskHitWeight", k.DiskHitWeight)
}

// unit requires v, when set, in [0, 1].
func unit(p *problems, path string, v *float64) {
	if v != nil && !(*v >= 0 && *v <= 1) {
		p.add(path, "must be in [0, 1], got %g", *v)
	}
}

func (s *Scrape) validate(p *problems) {
	if s.Interval.Duration < 10e6 {
		p.add("scrape.interval", "must be at least 10ms, got %s", s.Interval.Duration)
	}
	if s.Timeout.Duration <= 0 {
		p.add("scrape.timeout", "must be positive")
	}
	if s.StaleAfter.Duration <= 0 {
		p.add("scrape.staleAfter", "must be positive")
	}
	if s.ExcludeAfter < 1 {
		p.add("scrape.excludeAfter", "must be at least 1")
	}
	if !strings.HasPrefix(s.Path, "/") {
		p.add("scrape.path", "must start with /, got %q", s.Path)
	}
	for _, e := range sortedKeys(s.EnginePaths) {
		if !strings.HasPrefix(s.EnginePaths[e], "/") {
			p.add("scrape.enginePaths."+e, "must start with /, got %q", s.EnginePaths[e])
		}
	}
}

func nonNeg(p *problems, path string, v *float64) {
	if v != nil && *v < 0 {
		p.add(path, "must not be negative, got %g", *v)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
