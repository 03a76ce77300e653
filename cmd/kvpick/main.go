// Command kvpick is the endpoint picker: an Envoy ext_proc server that routes
// each LLM request to the model-server endpoint with the least real work for
// it, counting KV-cache reuse. See the README for flags and configuration.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/go-logr/logr"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/internal/cli"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/grpcbuf"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

var program = cli.Program{
	Name: "kvpick",
	About: "a Gateway API Inference Extension endpoint picker: an Envoy ext_proc gRPC server that sends each LLM " +
		"request to the model server with the least work for it, counting the prompt prefix its KV cache already holds.",
	Synopsis: "kvpick --endpoints-file FILE [--config FILE] [flags]   (standalone)\n       kvpick --pool-name NAME [--pool-namespace NS] [--config-file FILE] [flags]   (Kubernetes mode)",
	Notes: `Configuration: every field is in config/samples/kvpick.yaml; --print-config shows the effective one.
Relative paths inside a --config file are read from the config file's folder.
Start-up problems (bad flags, config or endpoints file, a port in use) are printed as plain text, exit status 2.

Try it on loopback (see the README, "Run it by hand"):
  bin/modelsim --port 8001 --model demo-model & bin/modelsim --port 8002 --model demo-model &
  bin/kvpick --endpoints-file config/samples/endpoints-local.yaml --plaintext --metrics-addr 127.0.0.1:9090 &
  bin/gatewaysim --plaintext --requests 8 --endpoints-file config/samples/endpoints-local.yaml`,
}

type options struct {
	configFile    string
	endpointsFile string
	grpcAddr      string
	metricsAddr   string
	plaintext     bool
	pool          string
	verbosity     int
	printConfig   bool
	readyFile     string
	peers         string
	ref           *refFlags // the reference picker's flags and Kubernetes mode (refflags.go)
}

func main() {
	grpcbuf.Install()                                     // before any gRPC use, as gRPC requires
	fs := flag.NewFlagSet("kvpick", flag.ContinueOnError) // errors handled by program.Parse
	var o options
	fs.StringVar(&o.configFile, "config", "", "YAML configuration file (see config/samples)")
	fs.StringVar(&o.endpointsFile, "endpoints-file", "", "YAML endpoints file, reloaded on change (config: endpoints.file)")
	fs.StringVar(&o.grpcAddr, "grpc-addr", "", "ext_proc listen address (config: server.grpcAddr, default :9002)")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "metrics and health HTTP address (config: server.metricsAddr, default :9090)")
	fs.BoolVar(&o.plaintext, "plaintext", false, "serve gRPC without TLS (config: server.plaintext)")
	fs.StringVar(&o.pool, "pool", "default", "pool name used in metric labels")
	fs.IntVar(&o.verbosity, "v", 0, "log verbosity: 1 logs every decision, 2 adds why (cached blocks, score, session pin, the primary's queued prefill, running and predicted TTFT)")
	fs.BoolVar(&o.printConfig, "print-config", false, "print the effective configuration and exit")
	fs.StringVar(&o.readyFile, "ready-file", "", `once listening, write the bound addresses to this file as JSON {"grpc":..., "metrics":...} (for :0 ports)`)
	fs.StringVar(&o.peers, "peers", "", "replica sync: the other replicas' peer addresses, host:port,... (config: replicaSync.peers; this replica's own may be listed)")
	bindings := v1.BindFlags(fs)
	o.ref = bindRefFlags(fs)
	if err := program.Parse(fs, os.Args[1:], os.Stdout); err != nil {
		os.Exit(program.Fail(os.Stderr, err, cli.ExitUsage))
	}
	if fs.NArg() > 0 { // Go's flag parser stops at the first non-flag: "--tracing false" would drop every flag after it
		err := fmt.Errorf("unexpected argument %q (flags take --name=value; a bool flag takes no separate value)", fs.Arg(0))
		os.Exit(program.Fail(os.Stderr, err, cli.ExitUsage))
	}
	cfg, err := loadConfig(o, fs, bindings)
	if err != nil {
		os.Exit(program.Fail(os.Stderr, fmt.Errorf("invalid configuration:\n%w", err), cli.ExitUsage))
	}
	if o.printConfig {
		if err := printConfig(cfg); err != nil {
			os.Exit(program.Fail(os.Stderr, err, cli.ExitUsage))
		}
		return
	}
	log := telemetry.NewLogger(os.Stderr, o.verbosity)
	if w := o.ref.warning(); w != "" {
		log.Info(w)
	}
	for _, w := range bindings.Warnings() {
		log.Info("WARNING: " + w)
	}
	if !o.ref.kubeMode() { // in Kubernetes mode the controller, not a file, feeds the endpoints
		if err := checkEndpointsFile(cfg.Endpoints.File, log); err != nil {
			os.Exit(program.Fail(os.Stderr, err, cli.ExitUsage))
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, o, log); err != nil {
		os.Exit(program.Fail(os.Stderr, err, cli.ExitUsage))
	}
}

// checkEndpointsFile reads the endpoints file once before anything starts, so
// a bad file stops start-up with the same plain-text report as a bad config,
// and an empty one is warned about: every request would get 503 until it fills.
func checkEndpointsFile(path string, log logr.Logger) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("endpoints file: %w", err)
	}
	eps, err := endpoints.ParseFile(data)
	if err != nil {
		return fmt.Errorf("endpoints file %s:\n%w", path, err)
	}
	if len(eps) == 0 {
		log.Info("WARNING: the endpoints file lists no endpoints; every request gets 503 until it lists some (it is reloaded on change)", "file", path)
	}
	return nil
}

// loadConfig reads the file, applies flags (a Dynamo flag that disagrees with
// the file is an error), fills defaults and validates.
func loadConfig(o options, fs *flag.FlagSet, b *v1.FlagBindings) (*v1.Config, error) {
	cfg, err := o.ref.load(o.configFile)
	if err != nil {
		return nil, err
	}
	if err := b.Apply(cfg); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["endpoints-file"] {
		cfg.Endpoints.File = o.endpointsFile
	}
	if set["grpc-addr"] {
		cfg.Server.GRPCAddr = o.grpcAddr
	}
	if set["metrics-addr"] {
		cfg.Server.MetricsAddr = o.metricsAddr
	}
	if set["plaintext"] {
		cfg.Server.Plaintext = o.plaintext
	}
	if set["peers"] {
		cfg.ReplicaSync.Peers = strings.FieldsFunc(o.peers, func(r rune) bool { return r == ',' || r == ' ' })
	}
	if err := o.ref.apply(cfg, set); err != nil {
		return nil, err
	}
	cfg.SetDefaults()
	if cfg.Endpoints.File == "" && !o.ref.kubeMode() {
		return nil, errors.Join(cfg.Validate(), errors.New("endpoints.file: required (standalone mode): give --endpoints-file or set it in --config, or use Kubernetes mode (--pool-name or --endpoint-selector)"))
	}
	return cfg, cfg.Validate()
}
