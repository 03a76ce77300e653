// Command modelsim is a simulated vLLM-compatible model server: OpenAI
// completions and chat (streaming and not), /tokenize and render endpoints,
// vLLM- (or SGLang-) named metrics and vLLM KV events over ZMQ, all driven by
// the pkg/engine model in real time. Faults (jitter, failures, dropped event
// batches, cache resets) can be injected for tests.
//
// Tokenizer: prompts are tokenized with tokenize.Approx (documented in
// pkg/tokenize); generated tokens are short words that Approx maps back to the
// same ids.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kvpick/kvpick/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		os.Exit(program.Fail(os.Stderr, err, cli.ExitUsage))
	}
}

// run serves until ctx ends. It prints "modelsim listening on ADDR" once the
// listener is up (after the KV event endpoints, when enabled).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, stdout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv, err := newServer(ctx, o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(o.host, fmt.Sprint(o.port)))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if srv.kv != nil {
		fmt.Fprintf(stdout, "modelsim kv events on %s replay %q\n", srv.kv.pub.Endpoint(), srv.kv.pub.ReplayEndpoint())
	}
	fmt.Fprintf(stdout, "modelsim listening on %s\n", ln.Addr())
	go srv.run.run(ctx)
	go resetOnHangup(ctx, srv.run)
	hs := &http.Server{Handler: srv.routes(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		hs.Shutdown(shutCtx) //nolint:errcheck // best effort on exit
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// newServer wires the engine runner, KV publisher, metrics and faults.
func newServer(ctx context.Context, o options) (*server, error) {
	v := newVocab()
	var publish func(time.Time, []engineEvent)
	var kp *kvPublisher
	if o.kvEndpoint != "" {
		var err error
		if kp, err = newKVPublisher(ctx, o); err != nil {
			return nil, err
		}
		go func() { <-ctx.Done(); kp.pub.Close() }() //nolint:errcheck
		publish = kp.publish
	}
	rn, err := newRunner(o.engine, v.ids, publish)
	if err != nil {
		return nil, err
	}
	s := &server{model: o.model, loras: o.loraNames(), run: rn, vocab: v, kv: kp,
		faults: newFaults(o.engine.Seed, o.jitter, o.failFraction, o.failStatus), maxLen: maxModelLen(o)}
	s.registry, s.ttft = newMetrics(o.metricsStyle, o.model, rn.statsView)
	s.metricsStyle = o.metricsStyle
	return s, nil
}

func maxModelLen(o options) int {
	if c := o.engine.BlockSize * o.engine.NumGPUBlocks; o.engine.MaxModelLen == 0 || o.engine.MaxModelLen > c {
		return c
	}
	return o.engine.MaxModelLen
}

// resetOnHangup clears the prefix cache on SIGHUP.
func resetOnHangup(ctx context.Context, rn *runner) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	defer signal.Stop(ch)
	for {
		select {
		case <-ch:
			rn.resetCache()
		case <-ctx.Done():
			return
		}
	}
}
