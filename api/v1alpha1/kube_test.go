package v1alpha1

import (
	"strings"
	"testing"
	"time"
)

func TestKubernetesValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(k *Kubernetes)
		want string // substring of the error; "" means valid
	}{
		{"defaults", func(*Kubernetes) {}, ""},
		{"negative probe", func(k *Kubernetes) { k.APIProbeInterval = D(-time.Second) }, "kubernetes.apiProbeInterval: must be positive"},
		{"renew not shorter than lease", func(k *Kubernetes) { k.RenewDeadline = D(20 * time.Second) }, "kubernetes.renewDeadline: must be shorter"},
		{"retry not shorter than renew", func(k *Kubernetes) { k.RetryPeriod = D(10 * time.Second) }, "kubernetes.retryPeriod: must be shorter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Default()
			c.edit(&cfg.Kubernetes)
			err := cfg.Validate()
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestKubernetesDefaultsKeepUserValues(t *testing.T) {
	cfg, err := Parse([]byte("kubernetes:\n  engineLabels: [x/engine]\n  loraKey: my/lora\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.SetDefaults()
	k := cfg.Kubernetes
	if len(k.EngineLabels) != 1 || k.EngineLabels[0] != "x/engine" || k.LoRAKey != "my/lora" {
		t.Fatalf("user values lost: %+v", k)
	}
	if k.ModelsAnnotation != "kvpick.io/models" || k.LeaseDuration.Duration != 15*time.Second {
		t.Fatalf("defaults not filled: %+v", k)
	}
}
