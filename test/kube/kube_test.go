// Package kube runs kvpick as a separate process in Kubernetes pool mode
// against a real API server (envtest): pods are created and their status is
// patched as a kubelet would (Running, Ready, a 127.0.0.x pod IP) where
// modelsim processes listen, and requests go through the ext_proc client.
package kube

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infv1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"

	"github.com/kvpick/kvpick/internal/kubetest"
	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/controller"
	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

var (
	listenRe  = regexp.MustCompile(`modelsim listening on (127\.0\.0\.\d+:\d+)`)
	grpcRe    = regexp.MustCompile(`"kvpick serving ext_proc","addr":"([0-9.:]+)"`)
	metricsRe = regexp.MustCompile(`"serving metrics","addr":"([0-9.:]+)"`)
)

const ns = "serving"

type cluster struct {
	cfg     *rest.Config
	c       client.Client
	port    int
	metrics string
	grpc    string
	token   string // bearer token allowed to read /metrics
}

func newCluster(t *testing.T) *cluster {
	_, cfg := kubetest.Start(t)
	s, err := controller.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	k := &cluster{cfg: cfg, c: c, port: freePort(t)}
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	return k
}

func freePort(t *testing.T) int { return testutil.FreePort(t) }

// modelServer starts modelsim on ip:port and a pod for it, Running and Ready.
func (k *cluster) modelServer(t *testing.T, name, ip string) *corev1.Pod {
	t.Helper()
	p := testutil.Start(t, testutil.Binary(t, "modelsim"), "--host", ip, "--port", strconv.Itoa(k.port),
		"--model", "m", "--step-overhead", "1ms", "--prefill-rate", "200000")
	p.WaitFor(t, listenRe, 30*time.Second)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "sim"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "engine", Image: "modelsim"}}}}
	ctx := context.Background()
	if err := k.c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}}
	if err := k.c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

func (k *cluster) pool(t *testing.T) {
	t.Helper()
	p := &infv1.InferencePool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pool"}}
	p.Spec.Selector.MatchLabels = map[infv1.LabelKey]infv1.LabelValue{"app": "sim"}
	p.Spec.TargetPorts = []infv1.Port{{Number: infv1.PortNumber(k.port)}}
	p.Spec.EndpointPickerRef = &infv1.EndpointPickerRef{Name: "kvpick", Port: &infv1.Port{Number: 9002}}
	if err := k.c.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// picker starts kvpick in pool mode with a kubeconfig for the envtest API server.
func (k *cluster) picker(t *testing.T, extra ...string) *testutil.Proc {
	t.Helper()
	args := append([]string{"--pool-name", "pool", "--pool-namespace", ns, "--kubeconfig", kubetest.WriteKubeconfig(t, k.cfg),
		"--grpc-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--secure-serving=false", "--grpc-health-port", "0",
		"--tracing=false"}, extra...)
	p := testutil.Start(t, testutil.Binary(t, "kvpick"), args...)
	k.grpc = p.WaitFor(t, grpcRe, 60*time.Second)
	k.metrics = p.WaitFor(t, metricsRe, 60*time.Second)
	return p
}

func (k *cluster) metric(t *testing.T, name string) float64 {
	t.Helper()
	status, body := k.scrape(t, k.token)
	if status != http.StatusOK {
		t.Fatalf("/metrics: status %d: %s", status, body)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, name+" ") {
			v, _ := strconv.ParseFloat(line[len(name)+1:], 64)
			return v
		}
	}
	return -1
}

func (k *cluster) scrape(t *testing.T, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+k.metrics+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func send(ctx context.Context, c *envoyclient.Client, i int) (*envoyclient.GatewayResult, error) {
	body := fmt.Sprintf(`{"model":"m","prompt":"request %d about %s","max_tokens":4}`, i, strings.Repeat("x ", i%50))
	return c.Do(ctx, &http.Client{Timeout: 30 * time.Second}, envoyclient.Request{Method: "POST", Path: "/v1/completions", Body: []byte(body)})
}

// TestPoolModeEndToEnd: requests land on the pool's pods; a pod deleted
// mid-load leaves the set at once and no request decided afterwards names it
// (as primary or fallback), although its server still answers.
func TestPoolModeEndToEnd(t *testing.T) {
	k := newCluster(t)
	k.pool(t)
	ips := []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}
	var pods []*corev1.Pod
	for i, ip := range ips {
		pods = append(pods, k.modelServer(t, fmt.Sprintf("sim-%d", i), ip))
	}
	k.token = k.serviceAccountToken(t, "scraper", true)
	denied := k.serviceAccountToken(t, "stranger", false)
	picker := k.picker(t, "--router-mode", "round-robin") // metrics auth on: the default in Kubernetes mode
	picker.WaitFor(t, regexp.MustCompile(`ignoring reference-picker flags kvpick does not implement: (--tracing)`), 10*time.Second)
	if st, _ := k.scrape(t, ""); st != http.StatusUnauthorized {
		t.Fatalf("/metrics without a token: status %d, want 401", st)
	}
	if st, _ := k.scrape(t, denied); st != http.StatusForbidden {
		t.Fatalf("/metrics with a token not allowed by RBAC: status %d, want 403", st)
	}
	eventually(t, "3 endpoints", func() bool { return k.metric(t, "kvpick_kube_endpoints") == 3 })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := envoyclient.Dial(ctx, k.grpc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	want := map[string]bool{}
	for _, ip := range ips {
		want[net.JoinHostPort(ip, strconv.Itoa(k.port))] = true
	}
	served := map[string]int{}
	for i := range 12 {
		res, err := send(ctx, c, i)
		if err != nil || res.Status != 200 {
			t.Fatalf("request %d: %v %+v", i, err, res)
		}
		if !want[res.Endpoint] {
			t.Fatalf("request %d served by %q, not a pool pod", i, res.Endpoint)
		}
		served[res.Endpoint]++
	}
	if len(served) != 3 {
		t.Fatalf("round robin over 3 pods served by %v", served)
	}

	gone := net.JoinHostPort(ips[1], strconv.Itoa(k.port))
	var left atomic.Int64 // unix nanos when the picker's set lost the pod; 0 before
	var mu sync.Mutex
	var after, before, total int
	var wg sync.WaitGroup
	load, stopLoad := context.WithCancel(ctx)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; load.Err() == nil; i++ {
				start := time.Now().UnixNano()
				res, err := send(ctx, c, w*100000+i)
				if err != nil || res.Status != 200 {
					t.Errorf("request under load: %v %+v", err, res)
					return
				}
				names := strings.Contains(strings.Join(res.Route.Endpoints, ","), gone)
				mu.Lock()
				total++
				if l := left.Load(); l != 0 && start > l {
					after++
					if names {
						t.Errorf("request started %v after the pod left was routed to it: %v", time.Duration(start-l), res.Route.Endpoints)
					}
				} else if names {
					before++
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	deleted := time.Now()
	if err := k.c.Delete(ctx, pods[1]); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted pod to leave the set", func() bool { return k.metric(t, "kvpick_kube_endpoints") == 2 })
	left.Store(time.Now().UnixNano())
	t.Logf("pod left the candidate set %v after the delete call returned (upper bound, polled)", time.Since(deleted))
	eventually(t, "requests after the pod left", func() bool { mu.Lock(); defer mu.Unlock(); return after >= 40 })
	stopLoad()
	wg.Wait()
	t.Logf("under load: %d requests, %d named the pod before it left, %d decided after it left, none named it", total, before, after)
}
