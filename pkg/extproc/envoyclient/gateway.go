package envoyclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// GatewayResult is what the downstream client of the simulated gateway observes.
type GatewayResult struct {
	Status   int
	Endpoint string // the endpoint that served (empty when the picker answered itself)
	Route    *Result
	Body     []byte        // the response body as forwarded downstream
	TTFT     time.Duration // from the start to the first response body bytes
	Duration time.Duration // from the start to the end of the response
}

// Do runs the whole gateway path: route via the picker, send the HTTP request to the chosen endpoint (falling
// back to the next endpoint on a connection failure, as Envoy's retry would), and stream the upstream response
// back through the picker's response phases chunk by chunk. An unreachable upstream yields status 503.
func (c *Client) Do(ctx context.Context, hc *http.Client, req Request) (*GatewayResult, error) {
	start := time.Now()
	st, res, err := c.Route(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &GatewayResult{Route: res}
	if res.Status != 0 {
		out.Status, out.Body, out.Duration = res.Status, res.ImmediateBody, time.Since(start)
		return out, st.Close()
	}
	resp, ep, err := sendUpstream(ctx, hc, req, res)
	if err != nil {
		st.Abort()
		out.Status, out.Body, out.Duration = http.StatusServiceUnavailable, []byte(err.Error()), time.Since(start)
		return out, nil
	}
	defer resp.Body.Close()
	out.Status, out.Endpoint = resp.StatusCode, ep
	if err := relay(st, resp, ep, start, out); err != nil {
		st.Abort()
		return nil, err
	}
	return out, st.Close()
}

// relay streams the upstream response through the picker.
func relay(st *Stream, resp *http.Response, ep string, start time.Time, out *GatewayResult) error {
	if err := st.SendResponseHeaders(resp.StatusCode, resp.Header.Get("Content-Type"), ep, false); err != nil {
		return err
	}
	buf := make([]byte, 32<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if out.TTFT == 0 {
				out.TTFT = time.Since(start)
			}
			fwd, err := st.SendResponseBody(buf[:n], false)
			if err != nil {
				return err
			}
			out.Body = append(out.Body, fwd...)
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return fmt.Errorf("envoyclient: upstream body: %w", rerr)
		}
	}
	fwd, err := st.SendResponseBody(nil, true)
	out.Body = append(out.Body, fwd...)
	out.Duration = time.Since(start)
	return err
}

// sendUpstream tries the endpoints in order until one accepts the connection.
func sendUpstream(ctx context.Context, hc *http.Client, req Request, res *Result) (*http.Response, string, error) {
	var errs []error
	for _, ep := range res.Endpoints {
		hreq, err := upstreamRequest(ctx, req, res, ep)
		if err != nil {
			return nil, "", err
		}
		resp, err := hc.Do(hreq)
		if err == nil {
			return resp, ep, nil
		}
		errs = append(errs, err)
	}
	return nil, "", fmt.Errorf("envoyclient: no upstream reachable: %w", errors.Join(errs...))
}

func upstreamRequest(ctx context.Context, req Request, res *Result, ep string) (*http.Request, error) {
	method := req.Method
	if method == "" {
		method = http.MethodPost
	}
	body := req.Body // the body the picker hands on: echoed (streamed) or replaced (buffered)
	if res.BodyEcho != nil {
		body = res.BodyEcho
	} else if res.BodyMutation != nil {
		body = res.BodyMutation
	}
	hreq, err := http.NewRequestWithContext(ctx, method, "http://"+ep+req.Path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("envoyclient: upstream request: %w", err)
	}
	for k, v := range req.Headers {
		hreq.Header.Set(k, v)
	}
	for k, v := range res.Headers {
		if !strings.HasPrefix(k, ":") && k != "content-length" {
			hreq.Header.Set(k, v)
		}
	}
	if req.Body != nil && hreq.Header.Get("Content-Type") == "" {
		hreq.Header.Set("Content-Type", "application/json")
	}
	return hreq, nil
}
