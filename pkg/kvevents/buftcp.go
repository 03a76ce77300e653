package kvevents

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/transport"
)

// bufTCP is TCP with buffered reads for the subscriber: go-zeromq reads each
// frame's header and body with their own read calls, six system calls per
// three-frame event message; through a buffer a burst of messages costs one
// read. On a CPU-starved host those calls are most of the subscriber's time
// and show up as event lag (BenchmarkEventLagZMQ).
const bufTCP = "kvpick-buftcp"

// bufReadSize holds several event batches (16 blocks with token ids are
// about 2 KB).
const bufReadSize = 64 << 10

var registerBufTCP = sync.OnceValue(func() error { return zmq4.RegisterTransport(bufTCP, bufTransport{transport.New("tcp")}) })

// subscribeAddr is endpoint dialled through bufTCP when it is plain TCP and
// the transport registered; other endpoints (ipc, inproc) are left alone.
func subscribeAddr(endpoint string) string {
	rest, ok := strings.CutPrefix(endpoint, "tcp://")
	if !ok || registerBufTCP() != nil {
		return endpoint
	}
	return bufTCP + "://" + rest
}

type bufTransport struct{ transport.Transport }

// Dial wraps the TCP connection's reads in a buffer.
func (t bufTransport) Dial(ctx context.Context, d transport.Dialer, addr string) (net.Conn, error) {
	c, err := t.Transport.Dial(ctx, d, addr)
	if err != nil {
		return nil, err
	}
	return &bufConn{Conn: c, r: bufio.NewReaderSize(c, bufReadSize)}, nil
}

// bufConn is a net.Conn whose reads go through r; writes are unbuffered.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }
