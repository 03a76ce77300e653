# kvpick — the two commands a new user runs: `make demo` and `make test`.
GO      ?= go
BIN     ?= bin
PKGS    ?= ./...
FUZZTIME ?= 20s

.PHONY: all build test vet fmt-check demo bench fuzz e2e clean helm chart-test

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

## test: every test, with the race detector (what CI runs)
test: fmt-check vet
	$(GO) mod download
	HELM=$$(./hack/helm.sh) KUBEBUILDER_ASSETS=$${KUBEBUILDER_ASSETS:-$$(test -x $(TESTBIN)/kube-apiserver && echo $(TESTBIN))} \
		$(GO) test -race -count=1 -timeout 20m $(PKGS)
	$(GO) test -count=1 -tags purego ./pkg/tokenize   # the portable tokenizer path (amd64 runs assembly above)

vet:
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

## e2e: cross-process tests with real modelsim processes (slower)
e2e: build
	$(GO) test -race -count=1 -timeout 15m ./test/...

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
