package main

import (
	"errors"
	"fmt"
	"path/filepath"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

// load reads kvpick's configuration from --config, --config-file or
// --config-text (at most one).
func (r *refFlags) load(configFlag string) (*v1.Config, error) {
	given := 0
	for _, s := range []string{configFlag, r.configFile, r.configText} {
		if s != "" {
			given++
		}
	}
	switch {
	case given > 1:
		return nil, errors.New("give at most one of --config, --config-file and --config-text")
	case r.configText != "":
		cfg, err := v1.Parse([]byte(r.configText))
		if err != nil {
			return nil, fmt.Errorf("--config-text: %w", err)
		}
		return cfg, nil
	case r.configFile != "":
		return v1.LoadFile(r.configFile)
	}
	return v1.LoadFile(configFlag)
}

// apply writes the reference flags that were set into cfg.
func (r *refFlags) apply(cfg *v1.Config, set map[string]bool) error {
	var errs []error
	port := func(name string, v int, dst *string) {
		if !set[name] {
			return
		}
		if v < 1 || v > 65535 {
			errs = append(errs, fmt.Errorf("--%s: %d is not a port (1-65535)", name, v))
			return
		}
		*dst = fmt.Sprintf(":%d", v)
	}
	port("grpc-port", r.grpcPort, &cfg.Server.GRPCAddr)
	port("metrics-port", r.metricsPort, &cfg.Server.MetricsAddr)
	r.healthPortSet = set["grpc-health-port"]
	if r.healthPortSet && (r.grpcHealthPort < 0 || r.grpcHealthPort > 65535) {
		errs = append(errs, fmt.Errorf("--grpc-health-port: %d is not a port (0 turns it off)", r.grpcHealthPort))
	}
	if set["secure-serving"] {
		cfg.Server.Plaintext = !r.secureServing
	}
	if set["cert-path"] {
		cfg.Server.CertFile = filepath.Join(r.certPath, "tls.crt")
		cfg.Server.KeyFile = filepath.Join(r.certPath, "tls.key")
	}
	if set["metrics-staleness-threshold"] {
		cfg.Scrape.StaleAfter = v1.D(r.stalenessThreshold)
	}
	if set["refresh-metrics-interval"] {
		cfg.Scrape.Interval = v1.D(r.refreshInterval)
	}
	if set["model-server-metrics-path"] {
		cfg.Scrape.Path = r.metricsPath
	}
	if r.poolName != "" && r.endpointSelector != "" {
		errs = append(errs, errors.New("--pool-name and --endpoint-selector are exclusive"))
	}
	if !r.kubeMode() && (set["endpoint-target-ports"] || set["ha-enable-leader-election"]) {
		errs = append(errs, errors.New("--endpoint-target-ports and --ha-enable-leader-election need Kubernetes mode (--pool-name or --endpoint-selector)"))
	}
	return errors.Join(errs...)
}

// healthPort is the separate gRPC health port, 0 for none.
func (r *refFlags) healthPort() int {
	if r.healthPortSet || !r.kubeMode() {
		return r.grpcHealthPort
	}
	return DefaultGRPCHealthPort
}
