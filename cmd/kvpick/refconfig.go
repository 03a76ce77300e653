package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
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
		return parseOwn("--config-text", []byte(r.configText))
	case r.configFile != "":
		configFlag = r.configFile
	}
	cfg, err := v1.LoadFile(configFlag) // relative paths in it resolve against its folder; errors name the file
	if err != nil {
		if data, rerr := os.ReadFile(configFlag); rerr == nil && bytes.Contains(data, []byte("EndpointPickerConfig")) {
			return nil, fmt.Errorf("%s is the reference picker's EndpointPickerConfig; kvpick reads its own configuration format (README \"Configuration\"): %w", configFlag, err)
		}
		return nil, err
	}
	return cfg, nil
}

// parseOwn parses kvpick's configuration, saying so when given the
// reference picker's EndpointPickerConfig (as its chart passes).
func parseOwn(source string, data []byte) (*v1.Config, error) {
	cfg, err := v1.Parse(data)
	if err == nil {
		return cfg, nil
	}
	if bytes.Contains(data, []byte("EndpointPickerConfig")) {
		return nil, fmt.Errorf("%s is the reference picker's EndpointPickerConfig; kvpick reads its own configuration format (README \"Configuration\"): %w", source, err)
	}
	return nil, fmt.Errorf("%s: %w", source, err)
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
