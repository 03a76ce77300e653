package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

// Replica sync timings for the fault tests: a dead or cut-off peer is
// noticed within about two heartbeats and expired peerExpiry later.
const (
	peerExpiry = 2 * time.Second
	heartbeat  = 250 * time.Millisecond
)

// replicaFleet is two modelsim servers and n kvpick replicas syncing through
// a cuttable proxy per directed pair (links[i][j] carries i's pushes to j).
type replicaFleet struct {
	eps      string
	dir      string
	replicas []*replica
	links    [][]*cutProxy
}

type replica struct {
	proc    *testutil.Proc
	grpc    string
	metrics string
	client  *envoyclient.Client
}

func startReplicas(t *testing.T, n int) *replicaFleet {
	t.Helper()
	f := &replicaFleet{eps: filepath.Join(t.TempDir(), "endpoints.yaml")}
	sim := testutil.Binary(t, "modelsim")
	var lines []string
	for i := range 2 {
		p := testutil.Start(t, sim, "--port", "0", "--model", "m", "--step-overhead", "10ms", "--seed", strconv.Itoa(i))
		addr := p.WaitFor(t, listenRe, 20*time.Second)
		lines = append(lines, fmt.Sprintf("- {name: sim-%d, address: 127.0.0.1, port: %s, models: [m]}", i, addr[strings.LastIndex(addr, ":")+1:]))
	}
	os.WriteFile(f.eps, []byte("endpoints:\n"+strings.Join(lines, "\n")+"\n"), 0o644) //nolint:errcheck
	f.dir = t.TempDir()
	os.WriteFile(filepath.Join(f.dir, "secret"), []byte("e2e-shared-secret\n"), 0o600) //nolint:errcheck
	f.links = make([][]*cutProxy, n)
	for i := range n {
		f.links[i] = make([]*cutProxy, n)
		for j := range n {
			if i != j {
				f.links[i][j] = newCutProxy(t)
			}
		}
	}
	for i := range n {
		f.replicas = append(f.replicas, f.startReplica(t, i))
	}
	return f
}

// startReplica starts replica i (again, after a kill: same id, peers and config).
func (f *replicaFleet) startReplica(t *testing.T, i int) *replica {
	t.Helper()
	var peers []string
	for j := range f.links {
		if i != j {
			peers = append(peers, f.links[i][j].addr())
		}
	}
	cfg := filepath.Join(f.dir, fmt.Sprintf("kvpick-%d.yaml", i))
	os.WriteFile(cfg, []byte(fmt.Sprintf("replicaSync:\n  mode: peers\n  id: replica-%d\n  listenAddr: 127.0.0.1:0\n  secretFile: secret\n"+
		"  peerExpiry: %s\n  heartbeat: %s\n  reconnectMin: 50ms\n  reconnectMax: 500ms\n", i, peerExpiry, heartbeat)), 0o644) //nolint:errcheck
	ready := filepath.Join(t.TempDir(), "ready.json")
	p := testutil.Start(t, testutil.Binary(t, "kvpick"), "--config", cfg, "--endpoints-file", f.eps, "--plaintext",
		"--grpc-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--ready-file", ready, "--router-mode", "least-loaded",
		"--peers", strings.Join(peers, ","))
	addrs := readReady(t, p, ready, 20*time.Second)
	if addrs["peer"] == "" {
		t.Fatalf("ready file %v names no peer address", addrs)
	}
	for j := range f.links {
		if j != i {
			f.links[j][i].setTarget(addrs["peer"])
			f.links[j][i].setCut(true) // close the streams to a previous incarnation, if any
			f.links[j][i].setCut(false)
		}
	}
	return &replica{proc: p, grpc: addrs["grpc"], metrics: addrs["metrics"], client: testutil.DialPicker(t, addrs["grpc"])}
}

// Metrics read from a replica: its peers' requests it counts, and its own.
const (
	remoteInFlight = "kvpick_replicasync_remote_inflight_requests"
	ownInFlight    = "kvpick_endpoint_active_requests"
)

// waitMetric waits until replica r's metric reads want and returns how long
// that took.
func (f *replicaFleet) waitMetric(t *testing.T, r int, name string, want float64, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	m := &fleet{metrics: f.replicas[r].metrics}
	for deadline := start.Add(within); ; time.Sleep(20 * time.Millisecond) {
		got := m.metric(t, name)
		if got == want {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %d: %s = %v after %s, want %v", r, name, got, within, want)
		}
	}
}

// waitActive waits until replica r counts want of its peers' requests.
func (f *replicaFleet) waitActive(t *testing.T, r int, want float64, within time.Duration) time.Duration {
	t.Helper()
	return f.waitMetric(t, r, remoteInFlight, want, within)
}

// waitIdle waits until replica r counts no request in flight, its own or its peers'.
func (f *replicaFleet) waitIdle(t *testing.T, r int) {
	t.Helper()
	f.waitMetric(t, r, remoteInFlight, 0, 20*time.Second)
	f.waitMetric(t, r, ownInFlight, 0, 20*time.Second)
}

// longRequests sends k streaming requests through replica r that decode for
// about d each; the returned wait gives how many failed.
func (f *replicaFleet) longRequests(t *testing.T, r, k int, d time.Duration) func() int {
	t.Helper()
	tokens := int(d / (10 * time.Millisecond))
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
			defer cancel()
			body := fmt.Sprintf(`{"model":"m","prompt":%q,"max_tokens":%d,"ignore_eos":true,"stream":true}`, words(fmt.Sprintf("r%dq%d", r, i), 40), tokens)
			res, err := f.replicas[r].client.Do(ctx, &http.Client{}, envoyclient.Request{Method: "POST", Path: "/v1/completions", Body: []byte(body)})
			if err != nil || res.Status != 200 {
				mu.Lock()
				failed++
				mu.Unlock()
			}
		}()
	}
	return func() int { wg.Wait(); return failed }
}

// partition cuts (or restores) every link to and from replica r.
func (f *replicaFleet) partition(r int, cut bool) {
	for j := range f.links {
		if j != r {
			f.links[r][j].setCut(cut)
			f.links[j][r].setCut(cut)
		}
	}
}

// Killing a replica mid-load: the survivors stop counting its requests once
// its peer expiry passes; they keep counting each other's. Lost: the
// requests routed through the killed replica (their ext_proc streams broke:
// a gateway fails or retries them); nothing the survivors routed.
func TestKillReplicaMidLoad(t *testing.T) {
	f := startReplicas(t, 3)
	killedDone := f.longRequests(t, 0, 4, 8*time.Second)
	survivorDone := f.longRequests(t, 1, 2, 8*time.Second)
	f.waitActive(t, 2, 6, 10*time.Second) // replica 2 counts both peers' work
	if err := f.replicas[0].proc.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	healed := f.waitActive(t, 2, 2, 3*peerExpiry)
	f.waitActive(t, 1, 0, 3*peerExpiry)
	t.Logf("survivors stopped counting the killed replica's 4 requests %s after the kill (peerExpiry %s, heartbeat %s)", healed, peerExpiry, heartbeat)
	if healed < peerExpiry/2 {
		t.Errorf("healed in %s: sooner than the expiry bound %s, so it was not the expiry that healed it", healed, peerExpiry)
	}
	if n := survivorDone(); n != 0 {
		t.Errorf("%d of the survivor's requests failed: a replica's death must cost only its own streams", n)
	}
	t.Logf("lost: %d of the killed replica's 4 in-flight requests failed at the gateway", killedDone())
	f.waitIdle(t, 1)
	f.waitIdle(t, 2)
}

// Partitioning a replica: its peers expire its entries; when the partition
// heals it resends a snapshot and they count its requests again. Lost:
// nothing (its requests keep running; only the peers' view lags).
func TestPartitionedReplicaExpiresThenResyncs(t *testing.T) {
	f := startReplicas(t, 3)
	done := f.longRequests(t, 0, 3, 12*time.Second)
	f.waitActive(t, 1, 3, 10*time.Second)
	f.partition(0, true)
	expired := f.waitActive(t, 1, 0, 3*peerExpiry)
	f.waitActive(t, 2, 0, 3*peerExpiry)
	f.partition(0, false)
	resynced := f.waitActive(t, 1, 3, 5*time.Second)
	f.waitActive(t, 2, 3, 5*time.Second)
	t.Logf("partitioned replica's 3 requests expired on its peers %s after the cut; counted again %s after the partition healed", expired, resynced)
	if n := done(); n != 0 {
		t.Errorf("%d of the partitioned replica's requests failed; a peer partition must not fail requests", n)
	}
	for r := range f.replicas {
		f.waitIdle(t, r)
	}
}

// A replica killed and restarted under its own id (a container restart in
// the same pod): its new incarnation's first snapshot replaces the old
// one's work on its peers at once, well before the expiry bound; the peer's
// snapshot gives it the peer's work; its new requests are counted. Lost:
// the old incarnation's in-flight streams.
func TestRestartedReplicaResyncs(t *testing.T) {
	f := startReplicas(t, 2)
	old := f.longRequests(t, 0, 3, 8*time.Second)
	peerDone := f.longRequests(t, 1, 2, 12*time.Second)
	f.waitActive(t, 1, 3, 10*time.Second)
	if err := f.replicas[0].proc.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	f.replicas[0] = f.startReplica(t, 0)
	up := time.Since(start)
	f.waitActive(t, 1, 0, 3*peerExpiry)
	healed := time.Since(start)
	f.waitActive(t, 0, 2, 3*peerExpiry)
	learned := time.Since(start)
	t.Logf("restart: process up after %s; its old requests stopped counting on its peer after %s; it counted the peer's 2 requests after %s (peerExpiry %s, reconnectMax 500ms)",
		up, healed, learned, peerExpiry)
	if n := peerDone(); n != 0 {
		t.Errorf("%d of the peer's requests failed", n)
	}
	t.Logf("lost: %d of the old incarnation's 3 in-flight requests failed at the gateway", old())
	next := f.longRequests(t, 0, 2, 2*time.Second)
	f.waitActive(t, 1, 2, 10*time.Second)
	if n := next(); n != 0 {
		t.Errorf("%d requests through the restarted replica failed", n)
	}
	f.waitIdle(t, 0)
	f.waitIdle(t, 1)
}
