package main

import (
	"bytes"
	"fmt"

	"github.com/kvpick/kvpick/config/traces"
	"github.com/kvpick/kvpick/pkg/workload"
)

// loadTrace reads -trace, or the Mooncake trace embedded in the binary when
// -trace is empty, so the trace scenario runs from a fresh clone anywhere.
func loadTrace(o *options, limit int) (workload.Workload, error) {
	opts := workload.TraceOptions{RateScale: o.rateScale, Repeat: o.repeat, Limit: limit}
	if o.trace != "" {
		return workload.LoadMooncake(o.trace, opts)
	}
	w, err := workload.ParseMooncake(bytes.NewReader(traces.MooncakeSynthetic), opts)
	if err != nil {
		return workload.Workload{}, fmt.Errorf("embedded trace %s: %w", traces.MooncakeSyntheticName, err)
	}
	w.Name = "trace"
	return w, nil
}
