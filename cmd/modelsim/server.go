package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kvpick/kvpick/pkg/apierr"
	"github.com/kvpick/kvpick/pkg/engine"
	"github.com/kvpick/kvpick/pkg/request"
	"github.com/kvpick/kvpick/pkg/tokenize"
)

// maxBody bounds a request body (a 1M-token prompt is a few MB of text).
const maxBody = 64 << 20

// server is modelsim's OpenAI-compatible HTTP front end.
type server struct {
	model    string
	loras    map[string]bool
	run      *runner
	kv       *kvPublisher // nil when KV events are off
	vocab    *vocab
	faults   *faults
	ttft     prometheus.Observer
	registry *prometheus.Registry
	// metricsStyle is the --metrics-style dialect (vllm, sglang, sglang-gauges, trtllm).
	metricsStyle string
	maxLen       int
	nextID       atomic.Uint64
	created      int64
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/completions", s.generate(request.KindCompletions))
	mux.HandleFunc("POST /v1/chat/completions", s.generate(request.KindChatCompletions))
	mux.HandleFunc("POST /v1/completions/render", s.render(request.KindCompletions))
	mux.HandleFunc("POST /v1/chat/completions/render", s.render(request.KindChatCompletions))
	mux.HandleFunc("POST /tokenize", s.tokenize)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.Handle("GET "+metricsPath(s.metricsStyle), promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}))
	if s.metricsStyle == "trtllm" {
		mux.HandleFunc("GET /metrics", s.iterationStats)
	}
	mux.HandleFunc("POST /admin/reset-cache", s.resetCache)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, apierr.NotFound("no route for %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// writeError sends err as the OpenAI-style JSON error body.
func writeError(w http.ResponseWriter, err error) {
	status, body := apierr.Response(err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the client may be gone; nothing to do
}

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body) //nolint:errcheck
}

// readRequest reads and parses a body of the given kind.
func (s *server) readRequest(w http.ResponseWriter, r *http.Request, kind request.Kind) (*request.Request, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, apierr.New(http.StatusRequestEntityTooLarge, apierr.TypeTooLarge, "body exceeds %d bytes", maxBody)
		}
		return nil, apierr.BadRequest("reading body: %v", err)
	}
	req, err := parseBody(kind, body)
	if err != nil {
		if e := apierr.As(err); e.Status != http.StatusInternalServerError {
			return nil, e
		}
		return nil, apierr.BadRequest("invalid body: %v", err)
	}
	return req, nil
}

// resolveModel maps the requested model name to a LoRA adapter ("" = base).
func (s *server) resolveModel(name string) (string, error) {
	switch {
	case name == "" || name == s.model:
		return "", nil
	case s.loras[name]:
		return name, nil
	}
	return "", apierr.NotFound("The model `%s` does not exist.", name)
}

// promptTokens returns the token ids the engine sees for req.
func promptTokens(req *request.Request) []uint32 {
	if len(req.PromptTokenIDs) > 0 {
		return req.PromptTokenIDs
	}
	return tokenize.Approx(make([]uint32, 0, len(req.Prompt)/3+1), string(req.Prompt))
}

// engineError maps an engine.Add error to what the caller sees.
func engineError(err error) error {
	switch {
	case errors.Is(err, engine.ErrTooLong), errors.Is(err, engine.ErrEmptyPrompt):
		return apierr.BadRequest("%v", err)
	}
	return err
}

func (s *server) resetCache(w http.ResponseWriter, _ *http.Request) {
	s.run.resetCache()
	writeJSON(w, map[string]bool{"reset": true})
}

func (s *server) now() int64 {
	if s.created != 0 {
		return s.created
	}
	return time.Now().Unix()
}

// iterationStats answers /metrics as trtllm-serve does: a JSON list of
// per-iteration stats, not Prometheus text.
func (s *server) iterationStats(w http.ResponseWriter, _ *http.Request) {
	v := s.run.statsView()
	writeJSON(w, []map[string]any{{"iter": 0, "numActiveRequests": v.running, "numQueuedRequests": v.waiting,
		"kvCacheStats": map[string]any{"maxNumBlocks": v.numBlocks, "tokensPerBlock": v.blockSize}}})
}
