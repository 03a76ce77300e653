package router

import (
	"context"
	"testing"
)

// TestRefusedTakesBackThePrediction: a request its engine refused before any
// output (or one never sent) takes back the blocks it alone claimed on the
// predicted path; the prefix held before it stays, and so does everything
// once the first token was seen.
func TestRefusedTakesBackThePrediction(t *testing.T) {
	prefix, tail := words("shared", 200), words("long", 400)
	tests := []struct {
		name     string
		end      func(d *Decision)
		wantTail bool // the tail's blocks still predicted afterwards
	}{
		{"refused before output", func(d *Decision) { d.Commit(); d.Refused(); d.Done(nil) }, false},
		{"never sent", func(d *Decision) { d.Done(nil) }, false},
		{"refused after the first token", func(d *Decision) { d.Commit(); d.FirstToken(); d.Refused(); d.Done(nil) }, true},
		{"served", func(d *Decision) { d.Commit(); d.FirstToken(); d.Done(nil) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, 1, nil)
			held, _ := served(t, f, prefix)
			d, err := f.r.Route(context.Background(), input(prefix+tail, nil))
			if err != nil {
				t.Fatal(err)
			}
			long := d.(*Decision)
			tt.end(long)
			ep := long.Endpoints()[0]
			want := f.r.cachedBlocksOn(held, ep) // the prefix, as the index credits it
			if want == 0 {
				t.Fatal("the shared prefix is not predicted")
			}
			got := f.r.cachedBlocksOn(long.Prepared(), ep)
			if tt.wantTail && got <= want {
				t.Errorf("predicted %d blocks of the long prompt, want more than the prefix's %d", got, want)
			}
			if !tt.wantTail && got != want {
				t.Errorf("predicted %d blocks of the long prompt, want the prefix's %d only", got, want)
			}
		})
	}
}

// TestRefusedGivesBackWhatItPushedOut: on a full endpoint a long prompt's
// prediction pushes older prefixes out of the index; if its engine refuses it
// (it allocated nothing, so evicted nothing), they are predicted again. Once
// served, the eviction stands, as the engine's did.
func TestRefusedGivesBackWhatItPushedOut(t *testing.T) {
	older, long := words("older", 300), words("unrelated", 900)
	for _, tt := range []struct {
		name      string
		end       func(d *Decision)
		wantOlder bool
	}{
		{"refused", func(d *Decision) { d.Commit(); d.Refused(); d.Done(nil) }, true},
		{"served", func(d *Decision) { d.Commit(); d.FirstToken(); d.Done(nil) }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, 1, nil)
			held, ep := served(t, f, older)
			blocks := f.r.cachedBlocksOn(held, ep)
			if blocks == 0 {
				t.Fatal("the older prefix is not predicted")
			}
			f.r.deps.Index.SetCapacity(ep, f.r.deps.Index.Stats().Entries+1) // room for almost nothing more
			d, err := f.r.Route(context.Background(), input(long, nil))
			if err != nil {
				t.Fatal(err)
			}
			if got := f.r.cachedBlocksOn(held, ep); got >= blocks {
				t.Fatalf("the long prompt's claim left %d of the older prefix's %d blocks: the test needs it to push them out", got, blocks)
			}
			tt.end(d.(*Decision))
			got := f.r.cachedBlocksOn(held, ep)
			if tt.wantOlder && got != blocks {
				t.Errorf("after the refusal the older prefix has %d blocks predicted, want its %d back", got, blocks)
			}
			if !tt.wantOlder && got >= blocks {
				t.Errorf("after serving the long prompt the older prefix still has %d blocks predicted", got)
			}
		})
	}
}

// served routes text and serves it whole, returning its prepared request and
// the endpoint that holds its prefix now.
func served(t *testing.T, f *fixture, text string) (*Prepared, string) {
	t.Helper()
	d, err := f.route(context.Background(), input(text, nil))
	if err != nil {
		t.Fatal(err)
	}
	d.FirstToken()
	d.Done(nil)
	return d.(*Decision).Prepared(), d.Endpoints()[0]
}
