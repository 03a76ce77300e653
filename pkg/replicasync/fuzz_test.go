package replicasync

import (
	"testing"
	"time"
)

// FuzzApply feeds arbitrary event sequences (origins, sequence numbers,
// epochs, kinds, requests and endpoints drawn from the input) to Apply.
// Whatever arrives, nothing panics, no count goes negative, and once every
// peer is expired nothing of theirs is left in the tracker.
func FuzzApply(f *testing.F) {
	f.Add([]byte{0, 1, 1, 1, 1, 0, 0, 2, 1, 2, 1, 0, 0, 3, 1, 3, 1, 0})
	f.Add([]byte{1, 5, 2, 1, 7, 1, 1, 1, 1, 1, 7, 1, 2, 0, 0, 4, 3, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		b := newFixture(t, "b", nil)
		origins := []string{"a", "b", "c", ""}
		eps := []string{"e1", "e2", ""}
		var evs []Event
		for len(data) >= 6 {
			d := data[:6]
			data = data[6:]
			e := Event{Origin: origins[int(d[0])%len(origins)], Seq: uint64(d[1] % 8), Epoch: uint64(d[2] % 3),
				Kind: Kind(d[3] % 6), Request: uint64(d[4] % 4), Endpoint: eps[int(d[5])%len(eps)], At: t0.Add(-time.Duration(d[1]) * time.Second)}
			if e.Kind == KindAdded || e.Kind == KindPredicted {
				e.Work, e.IndexChain = work(int(d[4])*16, uint64(d[5]), uint64(d[5])+1), []uint64{uint64(d[5]) + 1}
			}
			evs = append(evs, e)
		}
		for i := 0; i < len(evs); i += 3 {
			b.r.Apply("peer", evs[i:min(i+3, len(evs))])
			for _, ep := range eps {
				if c := b.active.Counts(ep); c.Requests < 0 || c.PrefillTokens < 0 || c.DecodeBlocks < 0 || c.PendingBlocks < 0 {
					t.Fatalf("negative counts on %q: %+v", ep, c)
				}
			}
			if b.r.RemoteInFlight() != b.active.InFlight() {
				t.Fatalf("replica counts %d remote requests, tracker %d", b.r.RemoteInFlight(), b.active.InFlight())
			}
		}
		b.r.ExpirePeer("peer")
		if n := b.active.InFlight(); n != 0 || b.r.RemoteInFlight() != 0 {
			t.Fatalf("after expiring the peer %d requests remain (replica says %d)", n, b.r.RemoteInFlight())
		}
		for _, ep := range eps {
			if c := b.active.Counts(ep); c.Requests != 0 || c.PrefillTokens != 0 || c.DecodeBlocks != 0 || c.ContextTokens != 0 || c.PendingBlocks != 0 {
				t.Fatalf("after expiring the peer %q holds %+v", ep, c)
			}
		}
	})
}
