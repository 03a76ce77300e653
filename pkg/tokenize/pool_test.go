package tokenize

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// tokServer answers /tokenize with fixed tokens, or fails, counting requests.
type tokServer struct {
	*httptest.Server
	hits atomic.Int64
}

func newTokServer(t *testing.T, behave string) *tokServer {
	s := &tokServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		switch behave {
		case "ok":
			w.Write([]byte(`{"tokens":[7,8,9]}`))
		case "fail":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "hang":
			io.Copy(io.Discard, r.Body) // then the server notices the client leave
			<-r.Context().Done()
		}
	}))
	t.Cleanup(func() { s.CloseClientConnections(); s.Close() })
	return s
}

func urls(ss ...*tokServer) func(string) []string {
	return func(string) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = s.URL
		}
		return out
	}
}

func TestPoolExactness(t *testing.T) {
	approx := Approx(nil, "hello world")
	cases := []struct {
		name      string
		servers   []string
		budget    time.Duration
		wantExact bool
	}{
		{"a server answers", []string{"ok"}, time.Minute, true},
		{"second server answers", []string{"fail", "ok"}, time.Minute, true},
		{"none answers", []string{"fail", "fail"}, time.Minute, false},
		{"no endpoints", nil, time.Minute, false},
		{"a hung server costs at most the budget", []string{"hang"}, 500 * time.Millisecond, false},
		// The hung one gets half the budget, leaving the other 3 s (generous: the machine may be loaded).
		{"a hung server leaves time for the next", []string{"hang", "ok"}, 6 * time.Second, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ss []*tokServer
			for _, b := range tc.servers {
				ss = append(ss, newTokServer(t, b))
			}
			p := NewPool(urls(ss...), nil, tc.budget)
			for i := 0; i < 2; i++ { // both rotations of a two-server list
				got, exact := p.TokenizeExact(context.Background(), "m", []byte("hello world"), nil)
				want := approx
				if tc.wantExact {
					want = []uint32{7, 8, 9}
				}
				if exact != tc.wantExact || !slices.Equal(got, want) || p.Exact() != tc.wantExact {
					t.Fatalf("call %d: tokens %v exact %v Exact() %v, want %v exact %v", i, got, exact, p.Exact(), want, tc.wantExact)
				}
			}
		})
	}
}

// TestPoolSpreadsAndSkipsFailed: calls do not all start at the first endpoint,
// and an endpoint that failed is tried last while others answer.
func TestPoolSpreadsAndSkipsFailed(t *testing.T) {
	a, b, bad := newTokServer(t, "ok"), newTokServer(t, "ok"), newTokServer(t, "fail")
	p := NewPool(urls(bad, a, b), nil, time.Minute)
	for i := 0; i < 12; i++ {
		if _, exact := p.TokenizeExact(context.Background(), "m", []byte("x"), nil); !exact {
			t.Fatalf("call %d fell back with two healthy endpoints", i)
		}
	}
	if a.hits.Load() == 0 || b.hits.Load() == 0 {
		t.Fatalf("calls not spread: a %d b %d", a.hits.Load(), b.hits.Load())
	}
	if n := bad.hits.Load(); n != 1 {
		t.Fatalf("failed endpoint tried %d times, want once", n)
	}
}

// TestPoolHonoursCallerContext: a caller that went away gets the fallback at once.
func TestPoolHonoursCallerContext(t *testing.T) {
	s := newTokServer(t, "ok")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, exact := NewPool(urls(s), nil, time.Minute).TokenizeExact(ctx, "m", []byte("x"), nil); exact {
		t.Fatal("exact tokens for a cancelled caller")
	}
}
