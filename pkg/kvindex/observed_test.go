package kvindex

import (
	"errors"
	"maps"
	"testing"
	"time"
)

// stored is one BlockStored event in a test script.
type stored struct {
	ep      string
	parent  *uint64
	engine  []uint64
	from, n int // tokens[from*B : (from+n)*B]
	wantErr error
}

func ptr(v uint64) *uint64 { return &v }

func TestObservedPath(t *testing.T) {
	const B = 4
	seed := Seed("m", "", "")
	tokens := seq(8*B, 100)
	chain := BlockHashes(nil, seed, tokens, B) // what a request for tokens would look up
	type step struct {
		stored  *stored
		removed []uint64 // engine hashes, on endpoint "a"
		cleared bool     // endpoint "a"
	}
	tests := []struct {
		name    string
		steps   []step
		want    map[string]int
		unknown uint64
	}{
		{"one event", []step{{stored: &stored{ep: "a", engine: []uint64{11, 12, 13}, n: 3}}},
			map[string]int{"a": 3}, 0},
		{"continued from parent across two events", []step{
			{stored: &stored{ep: "a", engine: []uint64{11, 12}, n: 2}},
			{stored: &stored{ep: "a", parent: ptr(12), engine: []uint64{13, 14, 15}, from: 2, n: 3}},
		}, map[string]int{"a": 5}, 0},
		{"engine hashes are per endpoint", []step{
			{stored: &stored{ep: "a", engine: []uint64{11, 12}, n: 2}},
			{stored: &stored{ep: "b", parent: ptr(12), engine: []uint64{13}, from: 2, n: 1, wantErr: ErrUnknownParent}},
		}, map[string]int{"a": 2}, 1},
		{"unknown parent stores nothing", []step{
			{stored: &stored{ep: "a", parent: ptr(99), engine: []uint64{11, 12}, n: 2, wantErr: ErrUnknownParent}},
		}, map[string]int{}, 1},
		{"removed middle block breaks prefix", []step{
			{stored: &stored{ep: "a", engine: []uint64{11, 12, 13, 14}, n: 4}},
			{stored: &stored{ep: "b", engine: []uint64{11, 12, 13, 14}, n: 4}},
			{removed: []uint64{13, 777}},
		}, map[string]int{"a": 2, "b": 4}, 0},
		{"removed then stored again", []step{
			{stored: &stored{ep: "a", engine: []uint64{11, 12, 13}, n: 3}},
			{removed: []uint64{12, 13}},
			{stored: &stored{ep: "a", parent: ptr(11), engine: []uint64{22, 23}, from: 1, n: 2}},
		}, map[string]int{"a": 3}, 0},
		{"removed parent stays unknown", []step{
			{stored: &stored{ep: "a", engine: []uint64{11, 12}, n: 2}},
			{removed: []uint64{12}},
			{stored: &stored{ep: "a", parent: ptr(12), engine: []uint64{13}, from: 2, n: 1, wantErr: ErrUnknownParent}},
		}, map[string]int{"a": 1}, 1},
		{"cleared", []step{
			{stored: &stored{ep: "a", engine: []uint64{11, 12}, n: 2}},
			{stored: &stored{ep: "b", engine: []uint64{11}, n: 1}},
			{cleared: true},
		}, map[string]int{"b": 1}, 0},
		{"cleared forgets engine hashes", []step{
			{stored: &stored{ep: "a", engine: []uint64{11, 12}, n: 2}},
			{cleared: true},
			{stored: &stored{ep: "a", parent: ptr(12), engine: []uint64{13}, from: 2, n: 1, wantErr: ErrUnknownParent}},
		}, map[string]int{}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix := New(Options{})
			for i, s := range tc.steps {
				switch {
				case s.stored != nil:
					st := s.stored
					err := ix.ApplyStored(st.ep, seed, st.parent, st.engine, tokens[st.from*B:(st.from+st.n)*B], B, t0)
					if !errors.Is(err, st.wantErr) {
						t.Fatalf("step %d: err = %v, want %v", i, err, st.wantErr)
					}
				case s.cleared:
					ix.ApplyCleared("a")
				default:
					ix.ApplyRemoved("a", s.removed)
				}
			}
			if got := matchMap(ix, chain, t0); !maps.Equal(got, tc.want) {
				t.Fatalf("Match = %v, want %v", got, tc.want)
			}
			st := ix.Stats()
			if st.UnknownParent != tc.unknown || st.Predicted != 0 || st.Observed != st.Entries {
				t.Fatalf("stats = %+v", st)
			}
		})
	}
}

func TestObservedNeverExpires(t *testing.T) {
	ix := New(Options{PredictedTTL: time.Second})
	seed := Seed("m", "", "")
	tokens := seq(8, 0)
	if err := ix.ApplyStored("a", seed, nil, []uint64{1, 2}, tokens, 4, t0); err != nil {
		t.Fatal(err)
	}
	// A predicted claim on the same blocks keeps them observed.
	chain := BlockHashes(nil, seed, tokens, 4)
	ix.RecordPredicted("a", chain, t0)
	ix.RecordPredicted("b", chain, t0)
	later := t0.Add(time.Hour)
	if n := ix.Expire(later); n != 2 {
		t.Fatalf("Expire = %d, want 2 (b's claims only)", n)
	}
	if got := matchMap(ix, chain, later); !maps.Equal(got, map[string]int{"a": 2}) {
		t.Fatalf("Match = %v", got)
	}
	if st := ix.Stats(); st.Observed != 2 || st.Predicted != 0 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestApplyStoredRejectsShortTokens(t *testing.T) {
	ix := New(Options{})
	tests := []struct {
		name   string
		tokens []uint32
		bs     int
	}{
		{"short", seq(7, 0), 4},
		{"zero block size", seq(8, 0), 0},
		{"negative block size", seq(8, 0), -4},
		{"overflowing block size", seq(8, 0), 1 << 62},
	}
	for _, tc := range tests {
		if err := ix.ApplyStored("a", 1, nil, []uint64{1, 2}, tc.tokens, tc.bs, t0); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if st := ix.Stats(); st.Entries != 0 {
		t.Fatalf("stored %d entries from invalid events", st.Entries)
	}
}

func TestStatsMixedPaths(t *testing.T) {
	ix := New(Options{})
	_ = ix.ApplyStored("a", 1, nil, []uint64{1, 2, 3}, seq(12, 0), 4, t0)
	ix.RecordPredicted("a", chainOf(50, 2), t0)
	ix.RecordPredicted("b", chainOf(50, 4), t0)
	st := ix.Stats()
	if st.Observed != 3 || st.Predicted != 6 || st.Entries != 9 || st.UniqueBlocks != 7 {
		t.Fatalf("stats = %+v", st)
	}
	if len(st.Endpoints) != 2 || st.Endpoints[0].Endpoint != "a" || st.Endpoints[0].Observed != 3 {
		t.Fatalf("per endpoint = %+v", st.Endpoints)
	}
}
