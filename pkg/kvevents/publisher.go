package kvevents

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
)

// DefaultBufferSteps is how many batches the replay buffer keeps (vLLM's default).
const DefaultBufferSteps = 10000

// pubHighWaterMark bounds zmq4's otherwise unbounded PUB queue; past it,
// messages are dropped (and subscribers see a gap) rather than growing memory.
const pubHighWaterMark = 10000

// PublisherOptions configures a Publisher.
type PublisherOptions struct {
	// Endpoint the PUB socket binds, e.g. "tcp://*:5557" or "tcp://127.0.0.1:0".
	Endpoint string
	// ReplayEndpoint the ROUTER replay socket binds; "" disables replay.
	ReplayEndpoint string
	// Topic is sent as the first frame of every message.
	Topic string
	// ReplayTopic answers replay with the topic before each sequence, as
	// vLLM does since v0.26 (vllm-project/vllm#45177): [topic, seq, payload],
	// then ["", -1, ""]. Off: the original [seq, payload], then [-1, ""]
	// (older vLLM, SGLang).
	ReplayTopic bool
	// Encoding of the msgpack payload.
	Encoding Encoding
	// BytesHashes writes block hashes as bytes (see EncodeOptions).
	BytesHashes bool
	// BufferSteps is how many batches replay can serve; 0 means DefaultBufferSteps.
	BufferSteps int
	// DropFraction is fault injection: this share of batches is not sent after
	// it got its sequence number (so subscribers see gaps) but stays replayable.
	DropFraction float64
	// Seed makes DropFraction deterministic.
	Seed int64
}

// Publisher emits KV event batches the way vLLM's ZmqEventPublisher does:
// PUB frames [topic, 8-byte big-endian seq, payload] and a ROUTER that replays
// buffered batches. Safe for concurrent use.
type Publisher struct {
	opts   PublisherOptions
	pub    zmq4.Socket
	router zmq4.Socket // nil when replay is off

	mu      sync.Mutex
	seq     uint64
	buf     *ring
	rng     *rand.Rand
	dropped uint64

	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// NewPublisher binds the PUB (and replay) sockets. Cancel ctx or call Close to
// release them.
func NewPublisher(ctx context.Context, o PublisherOptions) (*Publisher, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.BufferSteps == 0 {
		o.BufferSteps = DefaultBufferSteps
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Publisher{opts: o, buf: newRing(o.BufferSteps), rng: rand.New(rand.NewSource(o.Seed)),
		cancel: cancel, done: make(chan struct{})}
	if err := p.bind(ctx); err != nil {
		close(p.done) // the replay server never started
		p.Close()
		return nil, err
	}
	go p.serveReplay(ctx)
	return p, nil
}

func (o PublisherOptions) validate() error {
	var errs []error
	if o.Endpoint == "" {
		errs = append(errs, errors.New("endpoint: required"))
	}
	if o.BufferSteps < 0 {
		errs = append(errs, fmt.Errorf("bufferSteps: %d is negative", o.BufferSteps))
	}
	if o.DropFraction < 0 || o.DropFraction >= 1 {
		errs = append(errs, fmt.Errorf("dropFraction: %v is outside [0, 1)", o.DropFraction))
	}
	if o.Encoding != EncodingArray && o.Encoding != EncodingMap && o.Encoding != EncodingMixed {
		errs = append(errs, fmt.Errorf("encoding: unknown value %d", o.Encoding))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kvevents: publisher options: %w", err)
	}
	return nil
}

func (p *Publisher) bind(ctx context.Context) error {
	p.pub = zmq4.NewPub(ctx)
	if err := p.pub.SetOption(zmq4.OptionHWM, pubHighWaterMark); err != nil {
		return fmt.Errorf("kvevents: set PUB high-water mark: %w", err)
	}
	if err := p.pub.Listen(p.opts.Endpoint); err != nil {
		return fmt.Errorf("kvevents: bind PUB %s: %w", p.opts.Endpoint, err)
	}
	if p.opts.ReplayEndpoint == "" {
		return nil
	}
	p.router = zmq4.NewRouter(ctx, zmq4.WithTimeout(5*time.Second))
	if err := p.router.Listen(p.opts.ReplayEndpoint); err != nil {
		return fmt.Errorf("kvevents: bind replay ROUTER %s: %w", p.opts.ReplayEndpoint, err)
	}
	return nil
}

// Endpoint returns the address the PUB socket is bound to (resolving port 0).
func (p *Publisher) Endpoint() string { return boundAddr(p.pub, p.opts.Endpoint) }

// ReplayEndpoint returns the bound replay address, or "" when replay is off.
func (p *Publisher) ReplayEndpoint() string {
	if p.router == nil {
		return ""
	}
	return boundAddr(p.router, p.opts.ReplayEndpoint)
}

func boundAddr(s zmq4.Socket, configured string) string {
	if s == nil || s.Addr() == nil {
		return configured
	}
	return s.Addr().Network() + "://" + s.Addr().String()
}

// Publish encodes b, assigns it the next sequence number (from 0), keeps it for
// replay and sends it, unless fault injection drops it. It returns the
// sequence number, or an error if encoding or queueing failed (the sequence is
// then not consumed).
func (p *Publisher) Publish(b Batch) (uint64, error) {
	payload, err := EncodeWith(b, EncodeOptions{Encoding: p.opts.Encoding, BytesHashes: p.opts.BytesHashes})
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	seq := p.seq
	if p.opts.DropFraction > 0 && p.rng.Float64() < p.opts.DropFraction {
		p.dropped++
	} else if err := p.pub.Send(zmq4.NewMsgFrom([]byte(p.opts.Topic), seqBytes(seq), payload)); err != nil {
		return 0, fmt.Errorf("kvevents: publish seq %d: %w", seq, err)
	}
	p.seq++
	p.buf.push(entry{seq: seq, payload: payload})
	return seq, nil
}

// Dropped reports how many batches fault injection has withheld so far.
func (p *Publisher) Dropped() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

// Close stops the replay server and closes both sockets. Safe to call more
// than once; later calls return the first call's result.
func (p *Publisher) Close() error {
	p.closeOnce.Do(func() {
		p.cancel()
		var errs []error
		if p.router != nil {
			errs = append(errs, p.router.Close())
		}
		<-p.done
		if p.pub != nil {
			errs = append(errs, p.pub.Close())
		}
		p.closeErr = errors.Join(errs...)
	})
	return p.closeErr
}

func seqBytes(seq uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, seq)
	return b
}
