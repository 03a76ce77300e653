# kvpick — the two commands a new user runs: `make demo` and `make test`.
GO      ?= go
BIN     ?= bin
PKGS    ?= ./...
FUZZTIME ?= 20s

.PHONY: all build test vet fmt-check demo bench fuzz e2e clean testbin

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

## testbin: kube-apiserver and etcd for envtest, built once per machine from the module proxy
testbin:
	@./hack/testbin.sh

## test: every test, with the race detector (what CI runs)
test: fmt-check vet testbin
	$(GO) mod download
	# envtest suites fail here (KVPICK_REQUIRE_K8S=1) instead of skipping without the binaries.
	KUBEBUILDER_ASSETS=$$(./hack/testbin.sh) KVPICK_REQUIRE_K8S=1 $(GO) test -race -count=1 -timeout 20m $(PKGS)
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

## e2e: cross-process tests with real modelsim processes (slower); test/kube adds a real API server
e2e: build testbin
	KUBEBUILDER_ASSETS=$$(./hack/testbin.sh) KVPICK_REQUIRE_K8S=1 $(GO) test -race -count=1 -timeout 15m ./test/...

clean:
	rm -rf $(BIN) out
