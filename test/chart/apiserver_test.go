package chart

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// gatewayAPI is the Gateway API release whose CRDs validate the rendered Gateway, GatewayClass and HTTPRoute. The
// CRDs are read from the Go module (fetched through the module proxy into the module cache), not copied here.
const gatewayAPI = "sigs.k8s.io/gateway-api@v1.6.3"

// TestManifestsOnAPIServer creates every rendered object on a real kube-apiserver (envtest, with the chart's CRDs
// and the Gateway API CRDs installed) in server-side dry run with strict field validation, so the API server's own
// schemas judge the manifests. ServiceMonitor is left out: no Go module ships its CRD.
func TestManifestsOnAPIServer(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		if os.Getenv("KVPICK_REQUIRE_K8S") == "1" {
			t.Fatal("KVPICK_REQUIRE_K8S=1 but KUBEBUILDER_ASSETS is unset: point it at a folder with kube-apiserver and etcd (hack/testbin.sh)")
		}
		t.Skip("KUBEBUILDER_ASSETS unset: skipping the API-server dry run (set it to the folder hack/testbin.sh fills, or KVPICK_REQUIRE_K8S=1 to make this an error)")
	}
	c := startAPIServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	for _, values := range []string{"default.yaml", "full.yaml", "auth.yaml", "replicasync.yaml"} {
		t.Run(values, func(t *testing.T) {
			n := 0
			for _, o := range render(t, values) {
				if o.GetKind() == "ServiceMonitor" {
					continue
				}
				if err := dryRunCreate(ctx, c, o); err != nil {
					t.Errorf("%s %s/%s refused: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
				}
				n++
			}
			t.Logf("%d objects accepted in dry run", n)
		})
	}
	t.Run("server refuses a bad pool", func(t *testing.T) {
		// The dry run is a real check: a pool with nine target ports breaks the CRD's maxItems.
		pool := inferencePool(t)
		ports := make([]any, 9)
		for i := range ports {
			ports[i] = map[string]any{"number": int64(8000 + i)}
		}
		if err := unstructured.SetNestedSlice(pool.Object, ports, "spec", "targetPorts"); err != nil {
			t.Fatal(err)
		}
		if err := dryRunCreate(ctx, c, pool); err == nil {
			t.Fatal("the API server accepted an InferencePool with 9 target ports")
		}
		// Strict field validation: a field the schema does not know is an error, not silently dropped.
		dep := inferencePool(t)
		if err := unstructured.SetNestedField(dep.Object, "x", "spec", "endpointPickerRef", "failureModee"); err != nil {
			t.Fatal(err)
		}
		if err := dryRunCreate(ctx, c, dep); err == nil || !strings.Contains(err.Error(), "failureModee") {
			t.Fatalf("unknown field: %v, want an error naming it", err)
		}
	})
}

func dryRunCreate(ctx context.Context, c client.Client, o *unstructured.Unstructured) error {
	return c.Create(ctx, o, &client.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
}

func inferencePool(t *testing.T) *unstructured.Unstructured {
	for _, o := range render(t, "default.yaml") {
		if o.GetKind() == "InferencePool" {
			return o
		}
	}
	t.Fatal("no InferencePool rendered")
	return nil
}

// startAPIServer starts kube-apiserver and etcd from KUBEBUILDER_ASSETS with the CRDs installed.
func startAPIServer(t *testing.T) client.Client {
	t.Helper()
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(chartDir, "crds")},
		ErrorIfCRDPathMissing: true,
		CRDInstallOptions:     envtest.CRDInstallOptions{Paths: gatewayAPICRDs(t)},
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop envtest: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// gatewayAPICRDs returns the standard-channel CRDs the chart's route needs, from the Go module cache.
func gatewayAPICRDs(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", gatewayAPI).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v", gatewayAPI, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download %s: %v %s", gatewayAPI, err, m.Error)
	}
	dir := filepath.Join(m.Dir, "config", "crd", "standard")
	var paths []string
	for _, kind := range []string{"gatewayclasses", "gateways", "httproutes"} {
		paths = append(paths, filepath.Join(dir, "gateway.networking.k8s.io_"+kind+".yaml"))
	}
	return paths
}
