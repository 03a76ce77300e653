package router

import (
	"context"
	"testing"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/kvevents"
)

// TestEventsBridge: on the events path a routed prompt's prefix counts as
// cached on its endpoint from the decision until the first token of the last
// request routed with it, so a request arriving before the engine reported it
// follows it; then only what the engine's events reported stays. With
// kv.eventsBridge off, nothing is claimed.
func TestEventsBridge(t *testing.T) {
	prefix := words("doc", 600)
	tests := []struct {
		name     string
		bridge   bool
		report   bool // the engine reports the prefix before the first tokens
		follows  bool // the second request sees the first's prefix on its endpoint
		heldLast bool // the prefix is still credited after both first tokens
	}{
		{"bridge, engine reports", true, true, true, true},
		{"bridge, engine silent", true, false, true, false},
		{"off", false, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, 2, func(c *v1.Config) {
				c.KV.Observation = v1.ObserveEvents
				c.KV.EventsBridge = &tt.bridge
			})
			first, err := f.route(context.Background(), input(prefix+words("a", 10), nil))
			if err != nil {
				t.Fatal(err)
			}
			ep := first.Endpoints()[0]
			second, err := f.route(context.Background(), input(prefix+words("b", 10), nil))
			if err != nil {
				t.Fatal(err)
			}
			if got := second.(*Decision).CachedTokens() > 0; got != tt.follows {
				t.Fatalf("second request credited with %d cached tokens on %s; want credit %v",
					second.(*Decision).CachedTokens(), second.Endpoints()[0], tt.follows)
			}
			if tt.follows && second.Endpoints()[0] != ep {
				t.Fatalf("second request went to %s, not to %s where its prefix is on its way", second.Endpoints()[0], ep)
			}
			if tt.report {
				f.feed.HandleBatch(ep, kvevents.Batch{Events: []kvevents.Event{storeEvent(prefix, 16, "")}})
			}
			held := first.(*Decision).Prepared()
			first.FirstToken()
			if tt.follows && f.r.cachedBlocksOn(held, ep) == 0 {
				t.Fatal("the prefix went at the first request's first token while the second is still on its way")
			}
			second.FirstToken()
			if got := f.r.cachedBlocksOn(held, ep) > 0; got != tt.heldLast {
				t.Fatalf("after both first tokens: prefix credited %v, want %v", got, tt.heldLast)
			}
			first.Done(nil)
			second.Done(nil)
		})
	}
}
