package kvfeed

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	dto "github.com/prometheus/client_model/go"

	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// An endpoint whose events arrive but never hold the blocks of the requests
// routed to it raises the alarm (gauge and one warning); one that holds them
// does not, and a later match clears it.
func TestUnmatchedBlocksAlarm(t *testing.T) {
	set := endpoints.NewSet()
	if err := set.Replace([]endpoints.Endpoint{{Address: "10.0.0.1", Port: 8000, Models: []string{"m"}}}); err != nil {
		t.Fatal(err)
	}
	ep := "10.0.0.1:8000"
	var lines []string
	now := time.Unix(2e6, 0)
	const unmatchedAfter, probeSettle = 3, 500 * time.Millisecond // kv.unmatchedAlarmAfter, kv.unmatchedProbeSettle
	f := New(Options{Set: set, Index: kvindex.New(kvindex.Options{}), Pool: "unmatched-test", Auto: true, Now: func() time.Time { return now },
		UnmatchedAfter: unmatchedAfter, ProbeSettle: probeSettle,
		Log: funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})})
	gauge := func() float64 { return gaugeOf(t, telemetry.EventsUnmatched.WithLabelValues("unmatched-test", ep)) }
	tokens := make([]uint32, 32)
	for i := range tokens {
		tokens[i] = uint32(i + 1)
	}
	store := func(hashBase uint64) {
		f.HandleBatch(ep, kvevents.Batch{Events: []kvevents.Event{kvevents.BlockStored{BlockHashes: []uint64{hashBase, hashBase + 1},
			TokenIDs: tokens, BlockSize: 16}}})
	}
	store(1) // on the events path now
	for i := 0; i < unmatchedAfter; i++ {
		f.Probe(ep, uint64(0xdead0000+i), now) // hashes the engine never stores: a disagreement
		now = now.Add(probeSettle + time.Second)
		store(uint64(10 * (i + 2)))
		f.Check(now)
		if i < unmatchedAfter-1 && gauge() != 0 {
			t.Fatalf("alarm after %d misses", i+1)
		}
	}
	if gauge() != 1 || len(lines) != 2 { // "events arriving" and the warning
		t.Fatalf("after %d misses: gauge %v, log %q", unmatchedAfter, gauge(), lines)
	}
	// A block the router claimed on its way to the engine (kv.eventsBridge)
	// is no evidence that the engine hashes alike: still a miss.
	f.o.Index.ClaimUnreported(ep, []uint64{0xbeef}, now)
	f.Probe(ep, 0xbeef, now)
	now = now.Add(probeSettle + time.Second)
	store(90)
	f.Check(now)
	if gauge() != 1 {
		t.Fatal("a claimed block the engine never reported cleared the alarm")
	}
	own := kvindex.BlockHashes(nil, kvindex.ChainSeed("m", "", ""), tokens, 16)
	f.Probe(ep, own[0], now)
	now = now.Add(probeSettle + time.Second)
	store(100)
	f.Check(now)
	if gauge() != 0 {
		t.Fatal("a matching probe did not clear the alarm")
	}
}

// A probe is judged only after the endpoint stored blocks following it: a
// request the engine has not cached yet is no evidence.
func TestProbeWaitsForAStore(t *testing.T) {
	set := endpoints.NewSet()
	_ = set.Replace([]endpoints.Endpoint{{Address: "10.0.0.1", Port: 8000}})
	now := time.Unix(3e6, 0)
	f := New(Options{Set: set, Index: kvindex.New(kvindex.Options{}), Pool: "probe-wait", Auto: true, Log: logr.Discard(), Now: func() time.Time { return now }})
	ep := "10.0.0.1:8000"
	f.HandleBatch(ep, kvevents.Batch{Events: []kvevents.Event{kvevents.BlockStored{BlockHashes: []uint64{1}, TokenIDs: make([]uint32, 16), BlockSize: 16}}})
	for i := 0; i < 2*f.o.UnmatchedAfter; i++ {
		f.Probe(ep, uint64(i+77), now.Add(time.Millisecond))
	}
	f.Check(now.Add(time.Minute / 2))
	if st := f.st.get(ep); st.probes.misses != 0 || len(st.probes.pending) == 0 {
		t.Fatalf("judged %d probes with no store after them", st.probes.misses)
	}
}

// An event naming its adapter only by the deprecated numeric lora_id is kept
// apart from the base model's blocks.
func TestLoRAIDOnlyIsNotTheBaseModel(t *testing.T) {
	id := 3
	e := kvevents.BlockStored{BlockHashes: []uint64{9}, TokenIDs: make([]uint32, 16), BlockSize: 16, LoRAID: &id}
	if storedOf(e, "m").Seed == kvindex.ChainSeed("m", "", "") {
		t.Fatal("a lora_id store is seeded as the base model")
	}
	e.LoRAName = "sql"
	if storedOf(e, "m").Seed != kvindex.ChainSeed("whatever", "sql", "") {
		t.Fatal("a lora_name store is not seeded as a request for that adapter")
	}
}

func gaugeOf(t *testing.T, g interface{ Write(*dto.Metric) error }) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}
