package engine

import "testing"

// FuzzParseProfile checks that any document either fails cleanly or yields a
// valid config that builds an engine.
func FuzzParseProfile(f *testing.F) {
	f.Add([]byte("stepOverhead: 2ms\nmaxNumSeqs: 64\n"))
	f.Add([]byte("{\"blockSize\": 32, \"prefillTokensPerSec\": 39065}"))
	f.Add([]byte("decodeCostPerSeq: 100\nnumGpuBlocks: 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseProfile(DefaultConfig(), data)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("ParseProfile returned an invalid config: %v", err)
		}
		if c.NumGPUBlocks > 1<<20 {
			return // keep allocations bounded
		}
		if _, err := New(c, nil); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzEngine drives random request mixes through a tiny engine and checks
// its invariants: nothing panics, limits hold, every request finishes with
// exactly its tokens, and no block leaks.
func FuzzEngine(f *testing.F) {
	f.Add([]byte{3, 40, 5, 7, 12, 9, 1, 2, 3})
	f.Add([]byte{1, 200, 200, 200, 4, 4, 4, 4, 4, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 || len(data) > 64 {
			return
		}
		c := testConfig()
		c.NumGPUBlocks, c.MaxNumBatchedTokens, c.MaxNumSeqs = 16, 24, 1+int(data[0]%4)
		e, err := New(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{}
		for i := 1; i+1 < len(data); i += 2 {
			id := string(rune('a' + i))
			r := &Request{ID: id, Tokens: seqTokens(int(data[i]%8)*4, 1+int(data[i]%40)), MaxTokens: 1 + int(data[i+1]%20)}
			if e.Add(r) == nil {
				want[id] = r.MaxTokens
			}
		}
		got := map[string]int{}
		for steps := 0; !e.Idle(); steps++ {
			if steps > 5000 {
				t.Fatal("no progress")
			}
			res := e.Step(t0)
			if res.PrefillTokens+res.DecodeSeqs > c.MaxNumBatchedTokens || res.Scheduled > c.MaxNumSeqs {
				t.Fatalf("limits broken: %+v", res)
			}
			for _, u := range res.Updates {
				if u.HasToken {
					got[u.ID]++
				}
			}
		}
		for id, n := range want {
			if got[id] != n {
				t.Fatalf("%s produced %d tokens, want %d", id, got[id], n)
			}
		}
		if st := e.Stats(); st.UsedBlocks != 0 {
			t.Fatalf("%d blocks leaked", st.UsedBlocks)
		}
	})
}
