package main

import (
	"net/http"
	"strconv"
	"time"

	"github.com/kvpick/kvpick/pkg/engine"
	"github.com/kvpick/kvpick/pkg/request"
)

// generate serves /v1/completions and /v1/chat/completions.
func (s *server) generate(kind request.Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		arrival := time.Now()
		if err := s.faults.failure(); err != nil {
			writeError(w, err)
			return
		}
		req, err := s.readRequest(w, r, kind)
		if err != nil {
			writeError(w, err)
			return
		}
		lora, err := s.resolveModel(req.Model)
		if err != nil {
			writeError(w, err)
			return
		}
		if d := s.faults.delay(); d > 0 {
			time.Sleep(d)
		}
		g := s.newGeneration(kind, req)
		st, err := s.run.add(&engine.Request{ID: g.id, Tokens: promptTokens(req), MaxTokens: req.MaxTokens,
			LoRA: lora, Arrival: arrival})
		if err != nil {
			writeError(w, engineError(err))
			return
		}
		if req.Stream {
			s.stream(w, r, g, st, arrival)
		} else {
			s.complete(w, r, g, st, arrival)
		}
	}
}

// generation is one request's response state.
type generation struct {
	id           string
	chat         bool
	model        string
	includeUsage bool
	chunk        chunker
}

func (s *server) newGeneration(kind request.Kind, req *request.Request) *generation {
	prefix := "cmpl-"
	if kind == request.KindChatCompletions {
		prefix = "chatcmpl-"
	}
	model := req.Model
	if model == "" {
		model = s.model
	}
	g := &generation{id: prefix + strconv.FormatUint(s.nextID.Add(1), 10),
		chat: kind == request.KindChatCompletions, model: model, includeUsage: req.IncludeUsage}
	g.chunk = newChunker(g.id, g.chat, model, s.now())
	return g
}

// wait blocks for the next updates; it aborts the request and returns false
// when the client goes away.
func (s *server) wait(r *http.Request, g *generation, st *stream, buf []engine.Update) ([]engine.Update, bool) {
	for {
		if buf = st.take(buf[:0]); len(buf) > 0 {
			return buf, true
		}
		select {
		case <-st.notify:
		case <-r.Context().Done():
			s.run.abort(g.id)
			return buf, false
		}
	}
}

// stream writes the response as server-sent events, one chunk per token.
func (s *server) stream(w http.ResponseWriter, r *http.Request, g *generation, st *stream, arrival time.Time) {
	flusher, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var ups []engine.Update
	for ok := true; ok; {
		if ups, ok = s.wait(r, g, st, ups); !ok {
			return
		}
		out := g.chunk.buf[:0]
		for _, u := range ups {
			if u.First {
				s.ttft.Observe(time.Since(arrival).Seconds())
			}
			out = g.chunk.appendToken(out, s.vocab, u)
			if u.Finished {
				if g.includeUsage {
					out = g.chunk.appendUsage(out, u)
				}
				out = append(out, "data: [DONE]\n\n"...)
				ok = false
			}
		}
		g.chunk.buf = out
		if _, err := w.Write(out); err != nil {
			s.run.abort(g.id)
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// complete waits for the whole output and writes one JSON response.
func (s *server) complete(w http.ResponseWriter, r *http.Request, g *generation, st *stream, arrival time.Time) {
	var text []byte
	var ups []engine.Update
	for ok := true; ok; {
		if ups, ok = s.wait(r, g, st, ups); !ok {
			return
		}
		for _, u := range ups {
			if u.First {
				s.ttft.Observe(time.Since(arrival).Seconds())
			}
			text = s.vocab.appendText(text, u.Token)
			if u.Finished {
				writeJSON(w, g.chunk.final(string(text), u))
				ok = false
			}
		}
	}
}
