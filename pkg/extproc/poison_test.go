package extproc

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"

	"github.com/kvpick/kvpick/pkg/route"
)

// keepingRouter is a buggy router that keeps the request's prompt past Done
// without copying it.
type keepingRouter struct {
	*fakeRouter
	mu   sync.Mutex
	kept []byte
}

func (k *keepingRouter) Route(ctx context.Context, in *route.Input) (route.Decision, error) {
	k.mu.Lock()
	k.kept = in.Request.Prompt
	k.mu.Unlock()
	return k.fakeRouter.Route(ctx, in)
}

// TestPoisonCatchesRetention: with -tags kvpickpoison (make test), a prompt
// kept past Decision.Done reads the poison pattern, so the retention fails a
// test; in a normal build the buffer is recycled without poisoning.
func TestPoisonCatchesRetention(t *testing.T) {
	if !poisoned {
		t.Skip("released buffers are poisoned only with -tags kvpickpoison")
	}
	fake := newFakeRouter("10.0.0.1:8000")
	k := &keepingRouter{fakeRouter: fake}
	lis := startHarnessWith(t, k, Options{Log: logr.Discard()})
	prompt := strings.Repeat("keep me ", 500)
	ctx := testCtx(t)
	st, res, err := lis.client.Route(ctx, streamedReq(completion("m", prompt)))
	if err != nil || res.Status != 0 {
		t.Fatalf("route: %v %+v", err, res)
	}
	if err := st.Respond(ctx, 200, "text/event-stream", res.Endpoints[0], sseChunks); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	waitDone(t, fake.allDecisions()[0])
	k.mu.Lock()
	defer k.mu.Unlock()
	if string(k.kept) == prompt || !bytes.Contains(k.kept, []byte{poisonByte, poisonByte}) {
		t.Fatalf("a prompt kept past Done still reads as valid: %.40q", k.kept)
	}
}
