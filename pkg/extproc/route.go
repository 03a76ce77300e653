package extproc

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kvpick/kvpick/pkg/apierr"
	"github.com/kvpick/kvpick/pkg/request"
	"github.com/kvpick/kvpick/pkg/route"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// route asks the Decider for a decision. ok is false when there is none: then either the request was rejected
// (err is the send error, usually nil) or the stream's context ended (err says so).
func (st *stream) route(req *request.Request) (ok bool, err error) {
	if req != nil { // before routing, so a rejected request keeps its model in kvpick_requests_total
		st.model = modelLabels.get(strings.ToValidUTF8(req.Model, "\uFFFD")) // a bounded metric label value
	}
	in := &route.Input{Request: req, Path: st.path, Headers: st.headers, Subset: st.subset, SubsetPresent: st.subsetPresent}
	dec, err := st.s.decider.Route(st.ctx, in)
	st.decidedAt = time.Now()
	telemetry.ExtprocDecisionDuration.WithLabelValues(st.s.opts.Mode).Observe(st.decidedAt.Sub(st.inputEnd).Seconds())
	if err != nil {
		if ctxErr := st.ctx.Err(); ctxErr != nil {
			st.abort(ctxErr)
			return false, fmt.Errorf("route: %w", ctxErr)
		}
		return false, st.reject(err)
	}
	if dec == nil || len(dec.Endpoints()) == 0 {
		if dec != nil {
			dec.Done(errors.New("decision without endpoints"))
		}
		return false, st.reject(apierr.Unavailable("no endpoint available"))
	}
	st.accept(dec, req)
	return true, nil
}

// accept records the decision for the response path and the metrics.
func (st *stream) accept(dec route.Decision, req *request.Request) {
	st.dec = dec
	st.endpoint = dec.Endpoints()[0]
	telemetry.ExtprocEndpointInflight.WithLabelValues(st.endpoint).Inc()
	telemetry.CompatRouted(st.model)
	if log := st.s.opts.Log.V(1); log.Enabled() {
		log.Info("routed", "path", stripQuery(st.path), "model", st.model, "endpoints", dec.Endpoints(),
			"subset", len(st.subset), "subsetHint", st.subsetPresent, "bodyBytes", len(st.body),
			"decision", st.decidedAt.Sub(st.inputEnd), "sinceStart", st.decidedAt.Sub(st.start))
	}
}

func (st *stream) logReject(code int, err error) {
	if log := st.s.opts.Log.V(1); log.Enabled() {
		log.Info("rejected", "path", stripQuery(st.path), "status", code, "reason", err.Error())
	}
}

// served moves the in-flight count to the endpoint the proxy reports as used and tells the Decision.
func (st *stream) served(ep string) {
	if st.dec == nil || st.ended || st.resp.servedSeen || ep == "" {
		return
	}
	st.resp.servedSeen = true
	// Only an endpoint of the decision becomes a label value: the reported one is proxy input.
	if ep != st.endpoint && slices.Contains(st.dec.Endpoints(), ep) {
		telemetry.ExtprocEndpointInflight.WithLabelValues(st.endpoint).Dec()
		telemetry.ExtprocEndpointInflight.WithLabelValues(ep).Inc()
		st.endpoint = ep
	}
	st.dec.Served(ep)
}

// finish ends a routed request exactly once: Decision.Done, metrics.
func (st *stream) finish(err error, outcome string, code int) {
	if st.ended || st.dec == nil {
		return
	}
	st.ended = true
	if r, ok := st.dec.(route.Refuser); ok && code >= 400 {
		r.Refused() // an error answer before any output: the engine cached none of the prompt
	}
	st.dec.Done(err)
	telemetry.ExtprocEndpointInflight.WithLabelValues(st.endpoint).Dec()
	countRequest(st.model, st.s.opts.Mode, outcome, code)
	if outcome != outcomeRouted {
		telemetry.ExtprocEndpointUnfinished.WithLabelValues(st.endpoint, outcome).Inc()
	}
	telemetry.ExtprocRequestDuration.WithLabelValues(st.model).Observe(time.Since(st.start).Seconds())
	telemetry.CompatFinished(st.model, code, time.Since(st.start))
}

// destination is the header/metadata value: the ordered endpoint list, comma-joined.
func (st *stream) destination() string { return strings.Join(st.dec.Endpoints(), ",") }
