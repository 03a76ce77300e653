// Package chart tests the Helm chart charts/kvpick with a real helm binary:
// lint, rendering with default and non-default values, refusal of bad values
// by values.schema.json, and (with a control plane, KUBEBUILDER_ASSETS) the
// rendered manifests created on a real kube-apiserver in server-side dry run.
package chart

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const (
	chartDir  = "../../charts/kvpick"
	release   = "llama"
	namespace = "inference"
)

var (
	helmOnce sync.Once
	helmPath string
	helmErr  error
)

// helm returns the helm binary: $HELM when set, else the one hack/helm.sh installs from the Go module proxy into
// the per-machine cache (built on first use, about a minute).
func helm(t *testing.T) string {
	t.Helper()
	helmOnce.Do(func() {
		if p := os.Getenv("HELM"); p != "" {
			helmPath = p
			return
		}
		var out, stderr bytes.Buffer
		cmd := exec.Command("../../hack/helm.sh")
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			helmErr = errors.New("hack/helm.sh: " + err.Error() + ": " + stderr.String())
			return
		}
		helmPath = strings.TrimSpace(out.String())
	})
	if helmErr != nil {
		t.Fatal(helmErr)
	}
	return helmPath
}

// run runs helm with args and returns stdout, or stderr in the error.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, stderr bytes.Buffer
	cmd := exec.Command(helm(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	// A private helm home: no repositories or plugins of the machine leak in.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	if err := cmd.Run(); err != nil {
		return out.String(), errors.New(err.Error() + ": " + stderr.String())
	}
	return out.String(), nil
}

// render runs helm template with a values file (relative to testdata) and returns the objects.
func render(t *testing.T, values string) []*unstructured.Unstructured {
	t.Helper()
	out, err := run(t, "template", release, chartDir, "--namespace", namespace, "--include-crds=false",
		"-f", filepath.Join("testdata", values))
	if err != nil {
		t.Fatalf("helm template -f %s: %v", values, err)
	}
	objs, err := decode(out)
	if err != nil {
		t.Fatalf("rendered %s: %v", values, err)
	}
	return objs
}

// decode splits a multi-document YAML stream into objects, skipping empty documents.
func decode(s string) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(s)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, err
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

func TestLint(t *testing.T) {
	for _, values := range []string{"default.yaml", "full.yaml", "auth.yaml"} {
		t.Run(values, func(t *testing.T) {
			out, err := run(t, "lint", chartDir, "--strict", "-f", filepath.Join("testdata", values))
			if err != nil {
				t.Fatalf("helm lint: %v\n%s", err, out)
			}
		})
	}
}

// TestBadValuesRefused: values.schema.json (or a template check) refuses each bad file with a message that names
// the offending key.
func TestBadValuesRefused(t *testing.T) {
	tests := []struct {
		file string
		want []string // all must appear in the error
	}{
		{"failure-mode.yaml", []string{"failureMode", "FailOpen"}},
		{"too-many-ports.yaml", []string{"targetPorts", "maxItems"}},
		{"port-range.yaml", []string{"extProcPort", "maximum"}},
		{"unknown-key.yaml", []string{"replica", "additional"}},
		{"no-selector.yaml", []string{"inferencePool.modelServers.matchLabels is required"}},
		{"label-type.yaml", []string{"matchLabels", "string"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := run(t, "template", release, chartDir, "-f", filepath.Join("testdata", "bad", tt.file))
			if err == nil {
				t.Fatal("helm template accepted the bad values")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestDefaultValuesNeedSelector: the chart's own defaults render nothing until the pool's pods are named.
func TestDefaultValuesNeedSelector(t *testing.T) {
	_, err := run(t, "template", release, chartDir)
	if err == nil || !strings.Contains(err.Error(), "matchLabels is required") {
		t.Fatalf("helm template with defaults: %v, want the matchLabels requirement", err)
	}
}
