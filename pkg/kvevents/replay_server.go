package kvevents

import (
	"context"
	"encoding/binary"
	"slices"

	"github.com/go-zeromq/zmq4"
)

// endSeq is the replay end marker: -1 as a signed 8-byte big-endian integer.
var endSeq = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// serveReplay answers replay requests until ctx ends. A request is
// [identity, "", start-seq(8)] as a ROUTER sees a DEALER's [“”, start-seq];
// the answer is one [identity, "", seq, payload] per buffered batch with
// seq >= start, then [identity, "", -1, ""]; with ReplayTopic the topic (and
// an empty one before the end marker) comes before each sequence.
func (p *Publisher) serveReplay(ctx context.Context) {
	defer close(p.done)
	if p.router == nil {
		return
	}
	for {
		msg, err := p.router.Recv()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			continue
		}
		p.answer(msg.Frames)
	}
}

func (p *Publisher) answer(frames [][]byte) {
	if len(frames) < 2 || len(frames) > 3 || len(frames[len(frames)-1]) != 8 {
		return // not a replay request; vLLM ignores these too
	}
	head := [][]byte{frames[0]}
	if len(frames) == 3 {
		head = append(head, frames[1]) // keep the REQ-style empty delimiter
	}
	start := binary.BigEndian.Uint64(frames[len(frames)-1])
	p.mu.Lock()
	batch := p.buf.since(start)
	p.mu.Unlock()
	data, end := head, head
	if p.opts.ReplayTopic { // vLLM since v0.26: the topic first, an empty one before the end marker
		data = append(slices.Clip(head), []byte(p.opts.Topic))
		end = append(slices.Clip(head), []byte{})
	}
	for _, e := range batch {
		if p.reply(data, seqBytes(e.seq), e.payload) != nil {
			return
		}
	}
	_ = p.reply(end, endSeq, []byte{})
}

func (p *Publisher) reply(head [][]byte, frames ...[]byte) error {
	all := append(append([][]byte{}, head...), frames...)
	return p.router.Send(zmq4.NewMsgFrom(all...))
}
