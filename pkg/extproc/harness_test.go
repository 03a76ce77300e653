package extproc

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
	"github.com/kvpick/kvpick/pkg/route"
)

// harness is a real gRPC server on 127.0.0.1:0 with a fake router, and a client connected to it.
type harness struct {
	router *fakeRouter
	server *Server
	client *envoyclient.Client
	addr   string
	stop   context.CancelFunc
	served chan error // ServeGRPC's result
}

func startHarness(t testing.TB, r *fakeRouter, o Options, tlsConf *tls.Config, clientTLS *tls.Config) *harness {
	t.Helper()
	return startHarnessFor(t, r, o, tlsConf, clientTLS)
}

// startHarnessWith is startHarness for any router (h.router is set when it is a *fakeRouter).
func startHarnessWith(t testing.TB, r route.Decider, o Options) *harness {
	t.Helper()
	return startHarnessFor(t, r, o, nil, nil)
}

func startHarnessFor(t testing.TB, r route.Decider, o Options, tlsConf *tls.Config, clientTLS *tls.Config) *harness {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fake, _ := r.(*fakeRouter)
	h := &harness{router: fake, server: NewServer(r, o), addr: lis.Addr().String(), served: make(chan error, 1)}
	h.server.SetReady(true)
	ctx, cancel := context.WithCancel(context.Background())
	h.stop = cancel
	go func() { h.served <- ServeGRPC(ctx, lis, h.server, tlsConf, 5*time.Second) }()
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	if h.client, err = envoyclient.Dial(dctx, h.addr, clientTLS); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.client.Close()
		cancel()
		<-h.served
	})
	return h
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// completion is a /v1/completions body with the prompt JSON-encoded.
func completion(model, prompt string) []byte {
	p, _ := json.Marshal(prompt)
	return fmt.Appendf(nil, `{"model":%q,"prompt":%s,"max_tokens":16,"stream":true}`, model, p)
}

func streamedReq(body []byte, chunks ...int) envoyclient.Request {
	return envoyclient.Request{Method: "POST", Path: "/v1/completions", Body: body, ChunkSizes: chunks}
}

// longPrompt is roughly n tokens of English-like text (about 4 bytes per token).
func longPrompt(n int) string {
	words := []string{"the", "cache", "router", "sends", "prompt", "blocks", "to", "a", "worker", "with", "overlap"}
	var b strings.Builder
	for i := 0; b.Len() < n*4; i++ {
		b.WriteString(words[(i*7+i/3)%len(words)])
		b.WriteByte(' ')
	}
	return b.String()
}

// errorBody decodes an immediate response's JSON body.
func errorBody(t testing.TB, b []byte) (typ, msg string) {
	t.Helper()
	var v struct {
		Error struct{ Type, Message string } `json:"error"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("immediate body %q is not JSON: %v", b, err)
	}
	return v.Error.Type, v.Error.Message
}

func waitDone(t testing.TB, d *fakeDecision) decisionState {
	t.Helper()
	select {
	case <-d.done:
	case <-time.After(5 * time.Second):
		t.Fatal("Decision.Done not called")
	}
	time.Sleep(10 * time.Millisecond) // let a (wrong) second Done land before counting
	return d.state()
}
