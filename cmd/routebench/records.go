package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/kvpick/kvpick/pkg/fleetsim"
)

// recordColumns are the per-request CSV's header (-records): what a losing
// run's analysis needs, one row per request per policy. Times are seconds
// from the run's start; -1 when the request never got there. prefix is the
// prompt's first segment in hex (the shared prefix it starts with).
// finish_s is the last token (or the rejection), e2e_s arrival to last
// token; output the tokens asked for, generated those produced.
var recordColumns = []string{"policy", "id", "class", "arrival_s", "dispatch_s", "first_s", "ttft_s", "prompt",
	"cached", "endpoint", "queued", "rejected", "prefix", "finish_s", "e2e_s", "output", "generated"}

// writeRecords writes every policy's per-request records to path.
func (r *report) writeRecords(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("records: %w", err)
	}
	w := csv.NewWriter(f)
	_ = w.Write(recordColumns)
	for _, res := range r.results {
		for i := range res.Records {
			_ = w.Write(recordRow(res.Policy, &res.Records[i]))
		}
	}
	w.Flush()
	if err := firstErr(w.Error(), f.Close()); err != nil {
		return fmt.Errorf("records %s: %w", path, err)
	}
	return nil
}

func recordRow(policy string, rec *fleetsim.Record) []string {
	sec := func(d time.Duration) string {
		if d < 0 {
			return "-1"
		}
		return strconv.FormatFloat(d.Seconds(), 'f', 4, 64)
	}
	ttft, e2e := "-1", "-1"
	if rec.First >= 0 {
		ttft = sec(rec.TTFT())
	}
	if rec.Completed() {
		e2e = sec(rec.E2E())
	}
	return []string{policy, strconv.Itoa(rec.ID), rec.Class, sec(rec.Arrival), sec(rec.Dispatch), sec(rec.First), ttft,
		strconv.Itoa(rec.Prompt), strconv.Itoa(rec.Cached), strconv.Itoa(rec.Endpoint), strconv.FormatBool(rec.Queued),
		rec.Rejected, strconv.FormatUint(rec.Prefix, 16), sec(rec.Finish), e2e, strconv.Itoa(rec.Output),
		strconv.Itoa(rec.Generated)}
}
