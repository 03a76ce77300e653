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
	"syscall"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

type options struct {
	configFile    string
	endpointsFile string
	grpcAddr      string
	metricsAddr   string
	plaintext     bool
	pool          string
	verbosity     int
	printConfig   bool
	ref           *refFlags // the reference picker's flags and Kubernetes mode (refflags.go)
}

func main() {
	fs := flag.NewFlagSet("kvpick", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.configFile, "config", "", "YAML configuration file (see config/samples)")
	fs.StringVar(&o.endpointsFile, "endpoints-file", "", "YAML endpoints file, reloaded on change (config: endpoints.file)")
	fs.StringVar(&o.grpcAddr, "grpc-addr", "", "ext_proc listen address (config: server.grpcAddr, default :9002)")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "metrics and health HTTP address (config: server.metricsAddr, default :9090)")
	fs.BoolVar(&o.plaintext, "plaintext", false, "serve gRPC without TLS (config: server.plaintext)")
	fs.StringVar(&o.pool, "pool", "default", "pool name used in metric labels")
	fs.IntVar(&o.verbosity, "v", 0, "log verbosity: 1 logs every decision")
	fs.BoolVar(&o.printConfig, "print-config", false, "print the effective configuration and exit")
	bindings := v1.BindFlags(fs)
	o.ref = bindRefFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "kvpick: unexpected argument %q (flags take --name=value; a bool flag takes no separate value)\n", fs.Arg(0))
		os.Exit(2)
	}
	cfg, err := loadConfig(o, fs, bindings)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kvpick: invalid configuration:\n%v\n", err)
		os.Exit(2)
	}
	if o.printConfig {
		printConfig(cfg)
		return
	}
	log := telemetry.NewLogger(os.Stderr, o.verbosity)
	if w := o.ref.warning(); w != "" {
		log.Info(w)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, o, log); err != nil {
		log.Error(err, "kvpick stopped")
		os.Exit(1)
	}
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
	if err := o.ref.apply(cfg, set); err != nil {
		return nil, err
	}
	cfg.SetDefaults()
	if cfg.Endpoints.File == "" && !o.ref.kubeMode() {
		return nil, errors.Join(cfg.Validate(), errors.New("endpoints.file: required (standalone mode): give --endpoints-file or set it in --config, or use Kubernetes mode (--pool-name or --endpoint-selector)"))
	}
	return cfg, cfg.Validate()
}
