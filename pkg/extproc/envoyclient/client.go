// Package envoyclient drives an ext_proc server the way Envoy's ext_proc filter does (FULL_DUPLEX_STREAMED or
// BUFFERED body modes, protocol_config on the first message, the subset hint as filter metadata) and checks the
// Endpoint Picker protocol's invariants on the answers. Tests, benchmarks and the demo use it.
package envoyclient

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Mode is the body send mode the simulated proxy uses for both request and response.
type Mode int

const (
	// Streamed is FULL_DUPLEX_STREAMED: body chunks flow without waiting; the picker echoes them back.
	Streamed Mode = iota
	// Buffered is BUFFERED: the proxy waits for the headers answer, then sends the whole body in one message.
	Buffered
)

// Request is one HTTP request as the proxy sees it.
type Request struct {
	Method, Path  string
	Headers       map[string]string // extra request headers (names are lower-cased)
	Body          []byte            // nil = no body (headers carry end_of_stream)
	Mode          Mode
	ChunkSizes    []int    // split plan for streamed bodies, cycled; nil = one chunk
	Subset        []string // subset hint entries
	SubsetPresent bool     // send the subset hint (even when Subset is empty)
}

// Result is the picker's answer to the request phase.
type Result struct {
	Status          int // 0 when routed; the immediate response status otherwise
	Endpoints       []string
	Header          string            // raw x-gateway-destination-endpoint
	Metadata        string            // envoy.lb x-gateway-destination-endpoint
	Headers         map[string]string // all headers the picker set
	ImmediateBody   []byte
	BodyEcho        []byte // body returned by the picker (streamed mode)
	BodyMutation    []byte // body the picker replaced the request's with (buffered mode); nil when unchanged
	EchoChunkSizes  []int  // sizes of the returned body chunks
	ClearRouteCache bool
	// DecisionLatency is what the picker adds to the request's path: from the
	// last request byte handed to the stream to the decision received (the
	// headers answer in streamed mode, the body answer in buffered mode).
	// Zero for requests without a body.
	DecisionLatency time.Duration
	decidedAt       time.Time
}

// Client is a connection to an ext_proc server. Safe for concurrent use; each Route opens its own stream.
type Client struct {
	conn *grpc.ClientConn
	ext  extprocv3.ExternalProcessorClient
}

// Dial connects to addr (host:port) and waits until the connection is ready or ctx ends. tlsConf nil means
// plaintext.
func Dial(ctx context.Context, addr string, tlsConf *tls.Config) (*Client, error) {
	creds := insecure.NewCredentials()
	if tlsConf != nil {
		creds = credentials.NewTLS(tlsConf)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		return nil, fmt.Errorf("envoyclient: dial %s: %w", addr, err)
	}
	if err := waitReady(ctx, conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("envoyclient: dial %s: %w", addr, err)
	}
	return &Client{conn: conn, ext: extprocv3.NewExternalProcessorClient(conn)}, nil
}

func waitReady(ctx context.Context, conn *grpc.ClientConn) error {
	conn.Connect()
	for {
		s := conn.GetState()
		if s == connectivity.Ready {
			return nil
		}
		if !conn.WaitForStateChange(ctx, s) {
			return ctx.Err()
		}
	}
}

// Conn exposes the underlying connection (e.g. for the health service).
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Route opens a stream, sends the request's headers and body as Envoy does and reads the decision. It checks the
// protocol invariants (header == metadata, body echoed completely and byte-identical, chunks <= 62,000 bytes) and
// returns an error when one is broken. The Stream stays open for the response path; Close it in every case.
func (c *Client) Route(ctx context.Context, req Request) (*Stream, *Result, error) {
	sctx, cancel := context.WithCancel(ctx)
	ps, err := c.ext.Process(sctx)
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("envoyclient: open stream: %w", err)
	}
	st := &Stream{ps: ps, cancel: cancel, mode: req.Mode}
	var res *Result
	if req.Mode == Buffered {
		res, err = st.routeBuffered(req)
	} else {
		res, err = st.routeStreamed(req)
	}
	if err != nil {
		cancel()
		return nil, nil, err
	}
	st.routed = res.Status == 0
	return st, res, nil
}
