# kvpick — the two commands a new user runs: `make demo` and `make test`.
SHELL   := /bin/bash
GO      ?= go
BIN     ?= bin
PKGS    ?= ./...
FUZZTIME ?= 20s

.PHONY: all build test vet fmt-check demo bench fuzz e2e soak page-check grid jitter-grid readme-check readme-update clean helm chart-test testbin

all: build

build:
	@echo "building bin/kvpick, modelsim, routebench, gatewaysim, gridtables (the first build downloads modules and compiles: a few minutes)..."
	$(GO) build -o $(BIN)/ ./cmd/...

## testbin: kube-apiserver and etcd for envtest, built once per machine from the module proxy
testbin:
	@./hack/testbin.sh

## test: every test, with the race detector (what CI runs)
test: fmt-check testbin
	@echo "downloading the Go modules the tests need (first run only)..."
	$(GO) mod download
	@$(MAKE) --no-print-directory vet
	$(GO) test -count=1 -tags purego ./pkg/tokenize   # the portable tokenizer path (amd64 runs assembly below)
	@echo "the stream and router tests with released request buffers poisoned (nothing may keep a prompt past Done)..."
	$(GO) test -race -count=1 -tags kvpickpoison ./pkg/extproc/... ./pkg/router ./test/integration
	@echo "compiling tests with the race detector, then running them (first run: several quiet minutes of compiling)..."
	@# envtest suites fail here (KVPICK_REQUIRE_K8S=1) instead of skipping without the control plane.
	@HELM=$$(./hack/helm.sh) KUBEBUILDER_ASSETS=$$(./hack/testbin.sh) KVPICK_REQUIRE_K8S=1 \
		GO=$(GO) ./hack/gotest.sh -race -count=1 -timeout 20m $(PKGS)

vet:
	@echo "go vet (compiles every package once)..."
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## demo: the product brief's scenario through routebench, then a live fleet on loopback
demo: build
	./hack/demo.sh

## bench: decision-path and component benchmarks, then a routing comparison
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./pkg/... ./test/integration
	$(BIN)/routebench -scenario brief -out out/bench || $(GO) run ./cmd/routebench -scenario brief -out out/bench

## fuzz: run every fuzz target for FUZZTIME each
fuzz:
	./hack/fuzz.sh $(FUZZTIME)

## e2e: cross-process tests with real modelsim processes (slower; test/kube adds a real API server), then the routebench page in a real browser
e2e: build testbin
	HELM=$$(./hack/helm.sh) KUBEBUILDER_ASSETS=$$(./hack/testbin.sh) KVPICK_REQUIRE_K8S=1 $(GO) test -race -count=1 -timeout 15m ./test/...
	@$(MAKE) --no-print-directory page-check

## soak: SOAK_DURATION of mixed load at SOAK_RATE requests/s through three kvpick replicas and a modelsim fleet; goroutines
## and memory plotted into out/soak/ (samples.csv, goroutines.svg, heap.svg, summary.txt). Not part of `test`, which runs
## the same test for 20 s at 100/s, unsynced. SOAK_SYNC=false runs the replicas unsynced; SOAK_ARGS adds kvpick flags,
## SOAK_SIM_ARGS modelsim flags (a lower --prefill-rate makes the fleet, not the host, the bottleneck), SOAK_ORDER the
## synced replicas' replicaSync.queueOrder, SOAK_MAX_BATCHED each modelsim's --max-num-batched-tokens, stated to the
## pickers as capacity.maxBatchedTokens (32768; 0: modelsim's default, 8192, unstated, where this 2-core host's late
## first tokens keep the pickers' gate shut near 800/s: README "Soak").
SOAK_DURATION ?= 10m
SOAK_RATE     ?= 1000
SOAK_ARGS     ?=
SOAK_SYNC     ?= true
SOAK_SIM_ARGS ?=
SOAK_ORDER    ?=
SOAK_MAX_BATCHED ?= 32768
SOAK_LATE_AFTER ?= -1ns
SOAK_TIMEOUT  ?= 40m
soak:
	@mkdir -p out/soak
	$(GO) test -count=1 -v -timeout $(SOAK_TIMEOUT) \
		-run '^TestSoak$$' ./test/soak -args -soak.duration=$(SOAK_DURATION) -soak.rate=$(SOAK_RATE) \
		-soak.gpu-blocks=19000 -soak.workers=1024 -soak.out=$(CURDIR)/out/soak -soak.picker-args="$(SOAK_ARGS)" -soak.sync=$(SOAK_SYNC) -soak.sim-args="$(SOAK_SIM_ARGS)" -soak.queue-order=$(SOAK_ORDER) \
		-soak.max-batched=$(SOAK_MAX_BATCHED) -soak.late-after=$(SOAK_LATE_AFTER) \
		2>&1 | tee out/soak/test.log | grep -v '^\s*{'; test $${PIPESTATUS[0]} -eq 0

## page-check: a small routebench run's index.html opened in headless chromium (installed when missing): no missing image
page-check: build
	@rm -rf out/page-check
	$(BIN)/routebench -scenario brief -calibrate=false -rate 6 -requests 400 -policies round-robin,kv,kv+queue,least-loaded \
		-out out/page-check > out/page-check.log 2>&1 || { cat out/page-check.log; exit 1; }
	./hack/check-page.sh out/page-check/index.html out/page-check/screenshot.png

## grid: issue 11's routebench grid, every workload against every policy over SEEDS (default 1-3; about two minutes a seed)
grid: build
	./hack/grid.sh $(or $(SEEDS),1-3)

## jitter-grid: the grid over SEEDS (default 1-3) replayed with arrivals moved by up to 1 ms, once per JITTER_SEEDS (default 1-5); kv against the best on the replays' means (about five minutes a replay)
jitter-grid: build
	./hack/jitter-grid.sh $(or $(SEEDS),1-3) $(or $(JITTER_SEEDS),1-5)

## readme-check: rerun the routebench tables the README quotes; fail when they differ (a few minutes: not in `test`)
readme-check: build
	./hack/readme-tables.sh check

## readme-update: rerun them and write them into README.md
readme-update: build
	./hack/readme-tables.sh update

## helm: build helm from the Go module proxy into the per-machine cache (once) and print its path
helm:
	@./hack/helm.sh

# The control plane hack/testbin.sh builds (kube-apiserver, etcd); the chart's dry-run test uses it when present.
TESTBIN ?= $${XDG_CACHE_HOME:-$$HOME/.cache}/kvpick-testbin/k8s-v1.37.2

## chart-test: helm lint/template of charts/kvpick, the values schema, the dashboard check, and (with a control
## plane in TESTBIN or KUBEBUILDER_ASSETS) the rendered manifests on a real API server in dry run
chart-test:
	HELM=$$(./hack/helm.sh) KUBEBUILDER_ASSETS=$${KUBEBUILDER_ASSETS:-$$(test -x $(TESTBIN)/kube-apiserver && echo $(TESTBIN))} \
		$(GO) test -race -count=1 -timeout 10m -v ./test/chart ./test/dashboard

clean:
	rm -rf $(BIN) out
