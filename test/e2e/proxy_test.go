package e2e

import (
	"io"
	"net"
	"sync"
	"testing"
)

// cutProxy forwards loopback TCP to a target that can be set later, and can
// be cut (every connection closed, new ones refused) and restored: a network
// partition of one link between two replicas.
type cutProxy struct {
	lis    net.Listener
	mu     sync.Mutex
	target string
	cut    bool
	conns  map[net.Conn]bool
}

func newCutProxy(t *testing.T) *cutProxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{lis: lis, conns: map[net.Conn]bool{}}
	go p.accept()
	t.Cleanup(func() { lis.Close(); p.setCut(true) })
	return p
}

func (p *cutProxy) addr() string { return p.lis.Addr().String() }

func (p *cutProxy) setTarget(addr string) {
	p.mu.Lock()
	p.target = addr
	p.mu.Unlock()
}

// setCut cuts (closing what is open) or restores the link.
func (p *cutProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
	}
}

func (p *cutProxy) accept() {
	for {
		c, err := p.lis.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *cutProxy) forward(c net.Conn) {
	p.mu.Lock()
	target, cut := p.target, p.cut
	p.mu.Unlock()
	if cut || target == "" {
		c.Close()
		return
	}
	u, err := net.Dial("tcp", target)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, u) {
		return
	}
	go func() { io.Copy(u, c); u.Close() }() //nolint:errcheck // ends when either side closes
	io.Copy(c, u)                            //nolint:errcheck
	c.Close()
}

// track registers both ends, unless the link was cut meanwhile.
func (p *cutProxy) track(c, u net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		c.Close()
		u.Close()
		return false
	}
	p.conns[c], p.conns[u] = true, true
	return true
}
