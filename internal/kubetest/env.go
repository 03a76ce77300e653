// Package kubetest starts a real Kubernetes control plane (kube-apiserver and
// etcd from hack/testbin.sh, through controller-runtime's envtest) with
// kvpick's CRDs installed, and offers a cuttable TCP proxy in front of it to
// simulate an API-server outage.
package kubetest

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// RequireEnv is the environment variable that turns a missing control plane
// from a skip into a failure (`make test` sets it).
const RequireEnv = "KVPICK_REQUIRE_K8S"

// Start starts a control plane for t and stops it when t ends. Without
// KUBEBUILDER_ASSETS it skips (or fails when KVPICK_REQUIRE_K8S=1).
func Start(t testing.TB) (*envtest.Environment, *rest.Config) {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		msg := "no Kubernetes control plane: run `make testbin` and set KUBEBUILDER_ASSETS=$(./hack/testbin.sh)"
		if os.Getenv(RequireEnv) == "1" {
			t.Fatal(msg + " (" + RequireEnv + "=1 requires it)")
		}
		t.Skip(msg)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(t), "config", "crd")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest control plane from %s: %v", assets, err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Logf("stop envtest: %v", err)
		}
	})
	return env, cfg
}

// RepoRoot is the directory holding go.mod, found upwards from the test's directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}
