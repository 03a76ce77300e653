package main

import (
	"fmt"
	"math"
	"time"

	"github.com/kvpick/kvpick/pkg/fleetsim"
	"github.com/kvpick/kvpick/pkg/workload"
)

// Brief scenario shape: requests per run, and the document-import burst
// (documents, when, over how long) of the second run.
const (
	briefRequests     = 2000
	briefImportDocs   = 30
	briefImportAt     = 120 * time.Second
	briefImportWindow = 5 * time.Second
	// briefDefaultRate is the load used when calibration is off and -rate unset.
	briefDefaultRate = 8.0
)

// calibration is the outcome of the load search.
type calibration struct {
	TargetP95  float64          `json:"targetP95Seconds"`
	Rate       float64          `json:"rate"`
	RRP95      fleetsim.Seconds `json:"roundRobinP95Seconds"`
	Iterations int              `json:"iterations"`
	Tried      []calStep        `json:"tried"`
}

type calStep struct {
	Rate float64          `json:"rate"`
	P95  fleetsim.Seconds `json:"p95Seconds"`
}

// runBrief runs the product brief's scenario: calibrate the load, compare
// every policy at it, then again with a document-import burst on top.
func runBrief(o *options, fleet fleetsim.Config, specs []fleetsim.Spec) error {
	n := orDefault(o.requests, briefRequests)
	rate, cal := o.rate, (*calibration)(nil)
	if rate <= 0 && o.calibrate {
		var err error
		if cal, err = calibrate(o, fleet, n); err != nil {
			return err
		}
		rate = cal.Rate
		fmt.Printf("calibrated: round-robin p95 TTFT %.2fs at %.3f requests/s (target %.2fs, %d runs)\n\n",
			cal.RRP95, rate, cal.TargetP95, cal.Iterations)
	} else if rate <= 0 {
		rate = briefDefaultRate
	}
	steady, err := workload.Brief{Rate: rate, Requests: n}.Generate(o.seed)
	if err != nil {
		return err
	}
	res, err := runOne(o, report{name: "brief", title: fmt.Sprintf("brief: steady load %.3f requests/s", rate), cal: cal, rate: rate}, fleet, &steady, specs)
	if err != nil {
		return err
	}
	compareRRKV(res)
	burst, err := workload.Brief{Rate: rate, Requests: n, ImportDocs: briefImportDocs, ImportAt: briefImportAt,
		ImportWindow: briefImportWindow}.Generate(o.seed)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("brief-import: %.3f requests/s plus %d x 12,000-token documents within %v at t=%v",
		rate, briefImportDocs, briefImportWindow, briefImportAt)
	_, err = runOne(o, report{name: "brief-import", title: title, rate: rate}, fleet, &burst, specs)
	return err
}

// compareRRKV prints the brief's headline comparison when both ran.
func compareRRKV(res []*fleetsim.Result) {
	var rr, kv *fleetsim.Summary
	for _, r := range res {
		switch r.Policy {
		case fleetsim.PolicyRoundRobin:
			rr = &r.Summary
		case fleetsim.PolicyKV:
			kv = &r.Summary
		}
	}
	if rr != nil && kv != nil {
		fmt.Printf("same offered load: round-robin p95 TTFT %.2fs, kv p95 TTFT %.2fs (the brief reports 1.7s and 0.8s)\n\n", rr.TTFTP95, kv.TTFTP95)
	}
}

// calibrate searches the offered load at which round-robin's p95 TTFT is
// o.calTarget: grow the rate until p95 passes the target, then bisect. The
// workload for each probe uses the same seed, so p95(rate) is a fixed
// (if not perfectly monotone) function.
func calibrate(o *options, fleet fleetsim.Config, n int) (*calibration, error) {
	specs, err := fleetsim.Standard([]string{fleetsim.PolicyRoundRobin}, fleetsim.Options{})
	if err != nil {
		return nil, err
	}
	target := o.calTarget.Seconds()
	cal := &calibration{TargetP95: target}
	probe := func(rate float64) (float64, error) {
		w, err := workload.Brief{Rate: rate, Requests: n}.Generate(o.seed)
		if err != nil {
			return 0, err
		}
		res, err := fleetsim.Run(fleet, &w, specs[0])
		if err != nil {
			return 0, err
		}
		p := res.Summary.TTFTP95 // refusals count (+Inf): a load that refuses is over the target
		cal.Tried = append(cal.Tried, calStep{rate, p})
		cal.Iterations++
		return float64(p), nil
	}
	lo, hi := 0.0, 2.0*float64(len(fleet.Engines))
	var pHi float64
	for {
		if pHi, err = probe(hi); err != nil {
			return nil, err
		}
		if pHi >= target || hi > 1e4 {
			break
		}
		lo, hi = hi, hi*1.5
	}
	best, bestP := hi, pHi
	for i := 0; i < 14 && math.Abs(bestP-target) > 0.02*target; i++ {
		mid := (lo + hi) / 2
		p, err := probe(mid)
		if err != nil {
			return nil, err
		}
		if math.Abs(p-target) < math.Abs(bestP-target) {
			best, bestP = mid, p
		}
		if p < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	cal.Rate, cal.RRP95 = best, fleetsim.Seconds(bestP)
	return cal, nil
}
