package scrape

import (
	"reflect"
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/kvindex"
)

func TestLoadOf(t *testing.T) {
	at := time.Unix(1e6, 0)
	sm := Sample{Waiting: 3, Running: 5, KVUsage: 0.5, BlockSize: 16, TotalBlocks: 900, MaxLoRA: 2,
		RunningLoRA: []string{"sql"}, ScrapedAt: at}
	full := endpoints.Load{Waiting: 3, Running: 5, KVUsage: 0.5, BlockSize: 16, TotalBlocks: 900, MaxLoRA: 2,
		RunningLoRA: []string{"sql"}, At: at}
	cases := []struct {
		name string
		st   Status
		want endpoints.Load
	}{
		{"no sample yet", Status{Stale: true}, endpoints.Load{}},
		{"fresh sample", Status{Sample: sm, HasSample: true}, withFresh(full, true)},
		{"stale sample is kept but not trusted", Status{Sample: sm, HasSample: true, Stale: true}, full},
		{"excluded names its reason", Status{Sample: sm, HasSample: true, Stale: true, Excluded: true, LastError: "refused"},
			func() endpoints.Load { l := full; l.Excluded, l.Reason = true, "refused"; return l }()},
		{"sample without HasSample is ignored", Status{Sample: sm}, endpoints.Load{}},
	}
	for _, tc := range cases {
		if got := LoadOf(tc.st); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: LoadOf = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func withFresh(l endpoints.Load, fresh bool) endpoints.Load { l.Fresh = fresh; return l }

// TestStateSinkCapacity: the scraped KV size bounds the index (stride
// applied) only for endpoints whose own capacity does not give it.
func TestStateSinkCapacity(t *testing.T) {
	cases := []struct {
		name     string
		declared int // the endpoint's own TotalBlocks
		scraped  int
		want     int // entries the index keeps of 1000 distinct ones
	}{
		{"scraped size, stride 4", 0, 40, 10},
		{"declared size wins", 80, 40, 20},
		{"size unknown: default bound", 0, 0, 1000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set, ix := endpoints.NewSet(), kvindex.New(kvindex.Options{MaxBlocksPerEndpoint: 1000})
			ep := endpoints.Endpoint{Address: "10.0.0.1", Port: 8000, Capacity: endpoints.Capacity{TotalBlocks: tc.declared}}
			if err := set.Replace([]endpoints.Endpoint{ep}); err != nil {
				t.Fatal(err)
			}
			if tc.declared > 0 {
				ix.SetCapacity(ep.Key(), endpoints.Capacity{TotalBlocks: tc.declared}.IndexEntries(4)) // as membership does
			}
			notified := 0
			sink := &StateSink{Set: set, Index: ix, Stride: 4, Notify: func() { notified++ }}
			sink.UpdateScrape(ep.Key(), Status{HasSample: true, Sample: Sample{TotalBlocks: tc.scraped, Running: 2}})
			if e, _ := set.Snapshot().Get(ep.Key()); e.Load().Running != 2 || !e.Load().Fresh {
				t.Fatalf("load not written: %+v", e.Load())
			}
			if notified != 1 {
				t.Fatalf("notified %d times, want 1", notified)
			}
			now := time.Now()
			for i := 0; i < 1000; i++ {
				ix.RecordPredicted(ep.Key(), []uint64{uint64(i + 1)}, now)
			}
			if got := ix.Stats().Entries; got > tc.want || got < tc.want*3/4 {
				t.Fatalf("index keeps %d entries, want about %d (at most)", got, tc.want)
			}
		})
	}
}

func TestTargets(t *testing.T) {
	set := endpoints.NewSet()
	eps := []endpoints.Endpoint{{Address: "10.0.0.1", Port: 8000, MetricsPort: 9000, Engine: "sglang"}, {Address: "::1", Port: 8000, MetricsPort: 8000},
		{Address: "10.0.0.2", Port: 8000, MetricsPort: 8000, Engine: "trtllm"}, {Address: "10.0.0.3", Port: 8000, MetricsPort: 8000, Engine: "trtllm", MetricsPath: "/own"}}
	if err := set.Replace(eps); err != nil {
		t.Fatal(err)
	}
	pathFor := func(engine string) string {
		if engine == "trtllm" {
			return "/prometheus/metrics"
		}
		return "/metrics"
	}
	got := Targets(set.Snapshot(), pathFor)
	want := []Target{{Key: "10.0.0.1:8000", URL: "http://10.0.0.1:9000/metrics", Engine: "sglang"},
		{Key: "10.0.0.2:8000", URL: "http://10.0.0.2:8000/prometheus/metrics", Engine: "trtllm"},
		{Key: "10.0.0.3:8000", URL: "http://10.0.0.3:8000/own", Engine: "trtllm"},
		{Key: "[::1]:8000", URL: "http://[::1]:8000/metrics", Engine: Engine(set.Snapshot().List[3].Engine)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Targets = %+v, want %+v", got, want)
	}
}
