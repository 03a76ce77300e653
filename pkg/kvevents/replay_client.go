package kvevents

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-zeromq/zmq4"
)

// maxReplayBatches bounds one replay answer, against a misbehaving server.
const maxReplayBatches = 1 << 20

// fetchReplay asks the replay endpoint for every buffered batch from seq on
// and calls each with them in the order served, until each returns false, the
// end marker arrives, or replayTimeout passes. A fresh DEALER per request
// keeps a half-read answer from leaking into the next one.
func (s *Subscriber) fetchReplay(ctx context.Context, from uint64, each func(seq uint64, payload []byte) bool) error {
	if s.opts.ReplayEndpoint == "" {
		return errors.New("no replay endpoint")
	}
	ctx, cancel := context.WithTimeout(ctx, replayTimeout)
	defer cancel()
	d := zmq4.NewDealer(ctx, zmq4.WithDialerMaxRetries(0), zmq4.WithDialerTimeout(dialTimeout),
		zmq4.WithTimeout(replayTimeout))
	defer d.Close()
	if err := d.Dial(s.opts.ReplayEndpoint); err != nil {
		return fmt.Errorf("dial replay: %w", err)
	}
	if err := d.Send(zmq4.NewMsgFrom([]byte{}, seqBytes(from))); err != nil {
		return fmt.Errorf("send replay request: %w", err)
	}
	for i := 0; i < maxReplayBatches; i++ {
		seq, payload, end, err := recvReplay(d)
		if err != nil || end {
			return err
		}
		if !each(seq, payload) {
			return nil
		}
	}
	return fmt.Errorf("replay answer longer than %d batches", maxReplayBatches)
}

// recvReplay reads one answer in either layout vLLM has used: [“”, seq,
// payload], or since v0.26 [“”, topic, seq, payload] (the end marker then
// with an empty topic). The delimiter is optional. The topic is not checked:
// the answer comes from the socket this subscriber asked.
func recvReplay(d zmq4.Socket) (seq uint64, payload []byte, end bool, err error) {
	msg, err := d.Recv()
	if err != nil {
		return 0, nil, false, fmt.Errorf("receive replay: %w", err)
	}
	f := msg.Frames
	if len(f) >= 3 && len(f[0]) == 0 {
		f = f[1:]
	}
	if len(f) == 3 {
		f = f[1:] // the topic
	}
	if len(f) != 2 || len(f[0]) != 8 {
		return 0, nil, false, fmt.Errorf("replay answer with %d frames: %w", len(msg.Frames), ErrMalformed)
	}
	if bytes.Equal(f[0], endSeq) {
		return 0, nil, true, nil
	}
	return binary.BigEndian.Uint64(f[0]), f[1], false, nil
}
