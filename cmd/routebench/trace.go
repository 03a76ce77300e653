package main

import (
	"bytes"
	"fmt"

	"github.com/kvpick/kvpick/config/traces"
	"github.com/kvpick/kvpick/pkg/workload"
)

// loadTrace reads -trace, or the Mooncake trace embedded in the binary when
// -trace is empty (the synthetic one for -scenario trace, the conversation
// one for -scenario conversation), so both run from a fresh clone anywhere.
func loadTrace(o *options, limit int) (workload.Workload, error) {
	opts := workload.TraceOptions{RateScale: o.rateScale, Repeat: o.repeat, Limit: limit}
	if o.trace != "" {
		if o.scenario == "conversation" {
			return workload.Workload{}, fmt.Errorf("-trace %s: a file is replayed by -scenario trace; -scenario conversation replays the embedded %s", o.trace, traces.MooncakeConversationName)
		}
		return workload.LoadMooncake(o.trace, opts)
	}
	name, data := traces.MooncakeSyntheticName, traces.MooncakeSynthetic
	if o.scenario == "conversation" {
		name, data = traces.MooncakeConversationName, traces.MooncakeConversation
	}
	w, err := workload.ParseMooncake(bytes.NewReader(data), opts)
	if err != nil {
		return workload.Workload{}, fmt.Errorf("embedded trace %s: %w", name, err)
	}
	w.Name = o.scenario
	return w, nil
}
