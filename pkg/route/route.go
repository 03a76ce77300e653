// Package route is the contract between a transport (the ext_proc server, the
// fleet simulator) and the side that decides where a request goes: the input
// a transport hands over and the decision with its lifecycle hooks. It holds
// no transport and no policy, so either side links only what it uses.
package route

import (
	"context"

	"github.com/kvpick/kvpick/pkg/request"
)

// Decider decides where a request goes; pkg/router implements it (and asks
// pkg/scheduler, which only filters, scores and picks). Route may block
// (admission queue) until ctx is done.
type Decider interface {
	Route(ctx context.Context, in *Input) (Decision, error) // errors: *apierr.Error (status + type) or other (500)
}

// Input is what the server hands the Decider for one request. Request.Raw and Request.Prompt alias pooled
// buffers: they are valid until Decision.Done is called (or Route returns an error); copy them to keep them longer.
type Input struct {
	Request       *request.Request  // nil for a body-less request (e.g. GET /v1/models)
	Path          string            // from :path, or x-original-path when present
	Headers       map[string]string // lower-case names, includes pseudo headers; values as raw strings
	Subset        []string          // ip:port list from envoy.lb.subset_hint / x-gateway-destination-endpoint-subset
	SubsetPresent bool              // the hint was present (an empty present list means: answer 503)
}

// Decision is one routing outcome and the lifecycle hooks of the request it routed. Methods are called from the
// request's stream goroutine; Done is called exactly once (on success, error or client cancellation).
type Decision interface {
	Endpoints() []string    // ordered ip:port list, primary first, then fallbacks; never empty
	Headers() []HeaderValue // extra request headers to set (e.g. x-worker-instance-id, x-dp-rank); may be nil
	// Commit is called once the answer carrying the decision (and the echoed body) has been handed to the proxy,
	// before any response-path hook: bookkeeping done here stays off the request's path. A stream that fails
	// before that point calls only Done.
	Commit()
	Served(endpoint string)        // the endpoint the proxy reports as actually used
	FirstToken()                   // first generated output observed (prefill done)
	Progress(completionTokens int) // output tokens seen so far (approximate; from SSE chunks)
	Usage(u request.Usage)         // usage block seen in the response
	Done(err error)                // end of response (nil) or failure/cancel (non-nil)
}

// FirstTokenAtEnd is implemented by a Decision that tells a first token
// seen only at the response's end (a response not streamed) from one seen
// when it came: the prefill is done either way, but the end's time is the
// whole generation, not a time to first token, and must not teach a rate.
type FirstTokenAtEnd interface {
	FirstTokenAtEnd()
}

// Refuser is implemented by a Decision that takes back what it predicted the
// endpoint would cache when the endpoint answers with an error status before
// any output (it computed none of the prompt). The stream calls Refused
// before Done.
type Refuser interface {
	Refused()
}

// HeaderValue is one request header the Decision wants set.
type HeaderValue struct{ Key, Value string }
