package kvfeed

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// A kv router on the events path that hears nothing says so (gauge and a
// warning), and says so again when events resume.
func TestEventsSilenceIsReported(t *testing.T) {
	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
	w := newSilenceWatch(time.Unix(1e6, 0), time.Minute)
	gauge := func() float64 {
		mfs, _ := telemetry.Registry.Gather()
		for _, mf := range mfs {
			if mf.GetName() == "kvpick_kv_events_silent" {
				for _, m := range mf.Metric {
					if m.GetLabel()[0].GetValue() == "silent-test" {
						return m.GetGauge().GetValue()
					}
				}
			}
		}
		return -1
	}
	start := w.start
	w.check(start.Add(30*time.Second), "silent-test", log)
	if gauge() == 1 || len(lines) != 0 {
		t.Fatalf("silent after 30s: gauge %v lines %v", gauge(), lines)
	}
	w.check(start.Add(61*time.Second), "silent-test", log)
	if gauge() != 1 || len(lines) != 1 {
		t.Fatalf("not reported after a silent minute: gauge %v lines %v", gauge(), lines)
	}
	w.check(start.Add(62*time.Second), "silent-test", log)
	if len(lines) != 1 {
		t.Fatalf("repeated the warning: %v", lines)
	}
	w.seen(start.Add(63 * time.Second))
	w.check(start.Add(64*time.Second), "silent-test", log)
	if gauge() != 0 || len(lines) != 2 {
		t.Fatalf("recovery not reported: gauge %v lines %v", gauge(), lines)
	}
}

// TestFeedAppliesEvents: stored events make the index match the request's
// chain on that endpoint; removed and cleared events take it away; another
// endpoint never matches.
func TestFeedAppliesEvents(t *testing.T) {
	set := endpoints.NewSet()
	if err := set.Replace([]endpoints.Endpoint{{Address: "10.0.0.1", Port: 8000, Models: []string{"m"}}}); err != nil {
		t.Fatal(err)
	}
	ix := kvindex.New(kvindex.Options{})
	now := time.Unix(1e6, 0)
	f := New(Options{Set: set, Index: ix, Log: logr.Discard(), Now: func() time.Time { return now }})
	tokens := make([]uint32, 64)
	for i := range tokens {
		tokens[i] = uint32(i * 7)
	}
	chain := kvindex.BlockHashes(nil, kvindex.Seed("m", "", ""), tokens, 16)
	stored := kvevents.BlockStored{BlockHashes: []uint64{11, 12, 13, 14}, TokenIDs: tokens, BlockSize: 16}
	cases := []struct {
		name string
		ev   kvevents.Event
		want int
	}{
		{"stored", stored, 4},
		{"removed tail", kvevents.BlockRemoved{BlockHashes: []uint64{13, 14}}, 2},
		{"cleared", kvevents.AllBlocksCleared{}, 0},
		{"stored again", stored, 4},
	}
	for _, tc := range cases {
		f.HandleBatch("10.0.0.1:8000", kvevents.Batch{Events: []kvevents.Event{tc.ev}})
		got := 0
		for _, o := range ix.Match(chain, now, nil) {
			if o.Endpoint != "10.0.0.1:8000" {
				t.Fatalf("%s: match on %s", tc.name, o.Endpoint)
			}
			got = o.Blocks
		}
		if got != tc.want {
			t.Fatalf("%s: matched %d blocks, want %d", tc.name, got, tc.want)
		}
	}
}

// An SGLang salted store is held under the salt, as a request carrying the
// same cache_salt hashes it; the same tokens unsalted do not match.
func TestStoredOfFoldsTheSalt(t *testing.T) {
	tokens := []uint32{1, 2, 3, 4}
	e := kvevents.BlockStored{BlockHashes: []uint64{9}, TokenIDs: tokens, BlockSize: 4, Medium: "CPU_PINNED", CacheSalt: "s"}
	s := storedOf(e, "m")
	if s.Seed != kvindex.Seed("m", "", "s") || s.Seed == kvindex.Seed("m", "", "") {
		t.Fatalf("seed %x does not fold the salt", s.Seed)
	}
	if s.Tier != kvindex.TierHost {
		t.Fatalf("tier %v, want host", s.Tier)
	}
}
