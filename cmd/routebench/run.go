package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kvpick/kvpick/pkg/engine"
	"github.com/kvpick/kvpick/pkg/fleetsim"
	"github.com/kvpick/kvpick/pkg/workload"
)

func policyNames() []string { return fleetsim.PolicyNames }

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// fleetConfig is the simulated fleet: -endpoints copies of the engine
// defaults (pkg/engine.DefaultConfig, cited there), each overlaid by one of
// the comma-separated -engine-profile files in turn (endpoint i takes
// profile i mod n), so a fleet may mix capacities.
func fleetConfig(o *options) (fleetsim.Config, error) {
	profiles := []engine.Config{engine.DefaultConfig()}
	if files := splitList(o.engineProfile); len(files) > 0 {
		profiles = profiles[:0]
		for _, f := range files {
			ec, err := engine.LoadProfile(engine.DefaultConfig(), f)
			if err != nil {
				return fleetsim.Config{}, err
			}
			profiles = append(profiles, ec)
		}
	}
	engines := make([]engine.Config, o.endpoints)
	for i := range engines {
		engines[i] = profiles[i%len(profiles)]
	}
	delay := o.eventsDelay
	if delay == 0 {
		delay = -1 // fleetsim: negative means "at once"
	}
	return fleetsim.Config{Engines: engines, ScrapeInterval: o.scrapeInterval,
		EventsDelay: delay, TTFTTarget: o.ttftTarget, Seed: o.seed, ClientMaxTokens: o.clientMaxTok}, nil
}

func run(o *options) error {
	fleet, err := fleetConfig(o)
	if err != nil {
		return err
	}
	po, err := policyOptions(o)
	if err != nil {
		return err
	}
	specs, err := fleetsim.Standard(splitList(o.policies), po)
	if err != nil {
		return err
	}
	for i := range specs {
		specs[i] = fleetsim.Replicas(specs[i], fleetsim.ReplicaOptions{N: o.replicas, Sync: o.replicaSync == "on", Delay: o.syncDelay, Jitter: o.syncJitter})
	}
	if o.scenario == "brief" {
		return runBrief(o, fleet, specs)
	}
	w, err := buildWorkload(o)
	if err != nil {
		return err
	}
	_, err = runOne(o, report{name: o.scenario}, fleet, &w, specs)
	return err
}

// buildWorkload makes the non-brief scenarios' workloads.
func buildWorkload(o *options) (workload.Workload, error) {
	n := o.requests
	rate := func(def float64) workload.Arrivals {
		if o.rate > 0 {
			def = o.rate
		}
		return workload.Arrivals{Rate: def, Burstiness: o.burstiness}
	}
	var reqs []workload.Request
	var err error
	switch o.scenario {
	case "trace", "conversation":
		return loadTrace(o, n)
	case "shared-prefix":
		// Defaults after llm-d's benchmark: 150 shared 6k-token prefixes, 1.2k-token questions.
		reqs, err = workload.SharedPrefix{Requests: orDefault(n, 5000), Prefixes: o.prefixes, PrefixLen: o.prefixLen,
			SuffixLen: o.suffixLen, Share: o.share, Zipf: o.zipf, Output: o.output, Arrivals: rate(2 * float64(o.endpoints))}.Generate(o.seed)
	case "multiturn":
		reqs, err = workload.MultiTurn{Sessions: orDefault(n, 5000) / 5, Turns: 5, SystemLen: 2000, UserLen: 300,
			Output: o.output, ThinkTime: 10 * time.Second, Arrivals: rate(1.5 * float64(o.endpoints))}.Generate(o.seed)
	case "burst":
		// Steady shared-prefix traffic with a long-document import in the middle.
		arr := rate(4 * float64(o.endpoints))
		steady, err1 := workload.SharedPrefix{Requests: orDefault(n, 3000), Prefixes: 8, PrefixLen: 4000, SuffixLen: 300,
			Share: 0.9, Output: o.output, Arrivals: arr}.Generate(o.seed)
		mid := time.Duration(float64(orDefault(n, 3000)) / arr.Rate / 2 * float64(time.Second))
		docs, err2 := workload.Burst{Documents: 10 * o.endpoints, DocLen: 16000, Output: o.output,
			Start: mid, Window: 5 * time.Second}.Generate(o.seed)
		if err = firstErr(err1, err2); err == nil {
			return workload.Merge("burst", steady, docs), nil
		}
	default:
		return workload.Workload{}, fmt.Errorf("unknown -scenario %q (brief, trace, conversation, shared-prefix, multiturn, burst)", o.scenario)
	}
	if err != nil {
		return workload.Workload{}, err
	}
	if !o.sessions {
		for i := range reqs {
			reqs[i].Session = ""
		}
	}
	return workload.Merge(o.scenario, reqs), nil
}

func orDefault(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// runOne simulates every policy on w, prints the table and writes the files.
func runOne(o *options, rep report, fleet fleetsim.Config, w *workload.Workload, specs []fleetsim.Spec) ([]*fleetsim.Result, error) {
	if o.jitter > 0 {
		jw := w.Jitter(o.jitter, o.jitterSeed)
		w = &jw
	}
	start := time.Now()
	results, err := fleetsim.RunAll(fleet, w, specs, o.parallel)
	if err != nil {
		return nil, err
	}
	rep.wall = time.Since(start)
	rep.stats = w.Stats()
	rep.fleet = fleet
	rep.results = results
	rep.print(o)
	if o.collect != nil {
		o.collect.add(rep.name, results)
	}
	if o.out != "" {
		if err := rep.write(o); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// kvQueueThreshold parses -kv-queue-threshold: nil for the default, -1 for off.
func kvQueueThreshold(raw string) (*float64, error) {
	switch raw {
	case "":
		return nil, nil
	case "off":
		v := -1.0
		return &v, nil
	}
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil || v < 0 {
		return nil, fmt.Errorf("-kv-queue-threshold: want a fraction >= 0 or off, got %q", raw)
	}
	return &v, nil
}

// onOff parses an on/off flag: nil for empty (the default).
func onOff(name, raw string) (*bool, error) {
	switch raw {
	case "":
		return nil, nil
	case "on", "off":
		on := raw == "on"
		return &on, nil
	}
	return nil, fmt.Errorf("-%s: want on or off, got %q", name, raw)
}

// policyOptions maps the kv flags onto the standard policies' options.
func policyOptions(o *options) (fleetsim.Options, error) {
	po := fleetsim.Options{QueueThreshold: o.queueThreshold, OverlapWeight: o.overlapWeight, CostModel: o.costModel,
		QueuePolicy: o.queuePolicy, ReplicaQueueOrder: o.queueOrder}
	if o.queueSlack >= 0 {
		po.ReplicaQueueSlack = &o.queueSlack
	}
	if o.queueLate >= 0 {
		po.QueueLateAfter = &o.queueLate
	}
	if o.queueLateWin >= 0 {
		po.QueueLateWindow = &o.queueLateWin
	}
	var err error
	if po.EventsBridge, err = onOff("kv-events-bridge", o.eventsBridge); err != nil {
		return po, err
	}
	if o.queueSlackMax >= 0 {
		po.ReplicaQueueSlackMax = &o.queueSlackMax
	}
	t, err := kvQueueThreshold(o.kvQueueThresh)
	if err != nil {
		return po, err
	}
	po.KVQueueThreshold = t
	if o.decodeWeight >= 0 {
		po.DecodeWeight = &o.decodeWeight
	}
	if o.commonHolders >= 0 {
		po.CommonHolders = &o.commonHolders
	}
	if o.hotPrefix >= 0 {
		po.HotPrefixRequests = &o.hotPrefix
	}
	if o.popularShare >= 0 {
		po.PopularShare = &o.popularShare
	}
	if po.SessionLoad, err = onOff("kv-session-load", o.sessionLoad); err != nil {
		return po, err
	}
	if o.pressureWindow >= 0 {
		po.PressureWindow = &o.pressureWindow
	}
	if o.prefillWeight >= 0 {
		po.PrefillWeight = &o.prefillWeight
	}
	if o.balanceBound >= 0 {
		po.BalanceBound = &o.balanceBound
	}
	if o.predictedTTL < 0 {
		return po, fmt.Errorf("-kv-predicted-ttl: want a positive duration or 0 for the default, got %v", o.predictedTTL)
	}
	po.PredictedTTL = o.predictedTTL
	return po, nil
}

// replicasNote says how many picker replicas each policy ran as ("" for one).
func replicasNote(o *options) string {
	switch {
	case o.replicas <= 1 && o.replicaSync != "on":
		return ""
	case o.replicaSync == "on" && o.queueOrder == "local":
		return fmt.Sprintf(" (%d picker replicas per policy, synced, %v delay, local queue order)", o.replicas, o.syncDelay)
	case o.replicaSync == "on":
		return fmt.Sprintf(" (%d picker replicas per policy, synced, %v delay, shared queue order)", o.replicas, o.syncDelay)
	}
	return fmt.Sprintf(" (%d picker replicas per policy, not synced)", o.replicas)
}
