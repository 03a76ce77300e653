package extproc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

func healthStatus(t *testing.T, h *harness, service string) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	resp, err := healthpb.NewHealthClient(h.client.Conn()).Check(testCtx(t), &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		t.Fatalf("health %q: %v", service, err)
	}
	return resp.GetStatus()
}

func TestHealth(t *testing.T) {
	h := startHarness(t, newFakeRouter("10.0.0.1:8000"), Options{}, nil, nil)
	services := []string{"", HealthLiveness, HealthReadiness, HealthExtProc, HealthInferenceExtension}
	for _, ready := range []bool{true, false, true} {
		h.server.SetReady(ready)
		for _, svc := range services {
			want := healthpb.HealthCheckResponse_NOT_SERVING
			if ready || svc == HealthLiveness {
				want = healthpb.HealthCheckResponse_SERVING
			}
			if got := healthStatus(t, h, svc); got != want {
				t.Fatalf("ready=%v service %q: %v, want %v", ready, svc, got, want)
			}
		}
	}
}

func TestNewServerStartsNotReady(t *testing.T) {
	if NewServer(newFakeRouter(), Options{}).Ready() {
		t.Fatal("new server is ready")
	}
}

func clientTLSFor(t *testing.T, server *tls.Config) *tls.Config {
	t.Helper()
	cert, err := x509.ParseCertificate(server.Certificates[0].Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

func TestTLSSelfSigned(t *testing.T) {
	srv, err := SelfSignedTLS()
	if err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, newFakeRouter("10.0.0.1:8000"), Options{}, srv, clientTLSFor(t, srv))
	st, res, err := h.client.Route(testCtx(t), streamedReq(completion("m", "p"), 3))
	if err != nil || res.Header != "10.0.0.1:8000" {
		t.Fatalf("route over TLS: %v %+v", err, res)
	}
	st.Close()
}

func TestLoadTLSFromFiles(t *testing.T) {
	srv, err := SelfSignedTLS()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	keyDER, err := x509.MarshalPKCS8PrivateKey(srv.Certificates[0].PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, certFile, "CERTIFICATE", srv.Certificates[0].Certificate[0])
	writePEM(t, keyFile, "PRIVATE KEY", keyDER)
	conf, err := LoadTLS(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, newFakeRouter("10.0.0.1:8000"), Options{}, conf, clientTLSFor(t, srv))
	st, res, err := h.client.Route(testCtx(t), streamedReq(completion("m", "p")))
	if err != nil || res.Status != 0 {
		t.Fatalf("route: %v %+v", err, res)
	}
	st.Close()
	if _, err := LoadTLS(filepath.Join(dir, "missing.crt"), keyFile); err == nil {
		t.Fatal("LoadTLS accepted a missing file")
	}
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestGracefulShutdownFinishesInflightStream(t *testing.T) {
	h := startHarness(t, newFakeRouter("10.0.0.1:8000"), Options{}, nil, nil)
	ctx := testCtx(t)
	st, _, err := h.client.Route(ctx, streamedReq(completion("m", "p")))
	if err != nil {
		t.Fatal(err)
	}
	h.stop() // shutdown starts while the response is still to come
	time.Sleep(50 * time.Millisecond)
	if h.server.Ready() {
		t.Fatal("server still ready during shutdown")
	}
	select {
	case err := <-h.served:
		t.Fatalf("server stopped before the in-flight stream ended: %v", err)
	default:
	}
	if err := st.Respond(ctx, 200, "text/event-stream", "", sseChunks); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-h.served:
		if err != nil {
			t.Fatalf("ServeGRPC: %v", err)
		}
		h.served <- nil // for the cleanup
	case <-time.After(5 * time.Second):
		t.Fatal("server did not stop after the stream ended")
	}
	if d := waitDone(t, h.router.allDecisions()[0]); d.doneErr != nil || d.doneCalls != 1 {
		t.Fatalf("lifecycle = %+v", d)
	}
}

func TestShutdownGraceExpires(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := newFakeRouter("10.0.0.1:8000")
	s := NewServer(r, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ServeGRPC(ctx, lis, s, nil, 100*time.Millisecond) }()
	c, err := envoyclient.Dial(testCtx(t), lis.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, _, err := c.Route(testCtx(t), streamedReq(completion("m", "p")))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Abort()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("grace did not expire")
	}
	if d := waitDone(t, r.allDecisions()[0]); d.doneErr == nil {
		t.Fatal("stream cut by the hard stop ended without an error")
	}
}

func TestGatewayDo(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if !strings.Contains(string(body), `"model":"m"`) || req.Header.Get("x-gateway-destination-endpoint") == "" {
			http.Error(w, "bad upstream request", 400)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range sseChunks {
			w.Write(c)
			w.(http.Flusher).Flush()
		}
	}))
	defer upstream.Close()
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	live := strings.TrimPrefix(upstream.URL, "http://")
	r := newFakeRouter(deadAddr, live)
	r.fallbacks = 1
	h := startHarness(t, r, Options{}, nil, nil)
	res, err := h.client.Do(testCtx(t), upstream.Client(), streamedReq(completion("m", "p"), 5))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 || res.Endpoint != live || res.TTFT <= 0 || res.Duration < res.TTFT {
		t.Fatalf("gateway result = %+v", res)
	}
	if want := string(bytesJoin(sseChunks)); string(res.Body) != want {
		t.Fatalf("body %q, want %q", res.Body, want)
	}
	d := waitDone(t, r.allDecisions()[0])
	if d.served != live || d.firstToken != 1 || d.doneErr != nil {
		t.Fatalf("lifecycle = %+v", d)
	}
	bad, err := h.client.Do(testCtx(t), upstream.Client(), streamedReq([]byte(`{"prompt":1}`)))
	if err != nil || bad.Status != 400 || bad.Endpoint != "" {
		t.Fatalf("rejected request through the gateway: %v %+v", err, bad)
	}
}

func bytesJoin(cs [][]byte) []byte {
	var out []byte
	for _, c := range cs {
		out = append(out, c...)
	}
	return out
}
