package kvevents

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

func TestPublisherSubscriberStream(t *testing.T) {
	for _, enc := range []Encoding{EncodingArray, EncodingMap} {
		t.Run(enc.String(), func(t *testing.T) {
			p := newTestPublisher(t, PublisherOptions{Topic: "kv@pod-a", Encoding: enc})
			rec := &recorder{}
			s := NewSubscriber(SubscriberOptions{Endpoint: p.Endpoint(), Topic: "kv@", EndpointKey: "10.0.0.1:8000"}, rec, testLog(t))
			startSubscriber(t, s)
			warmUp(t, p, s)
			publishReal(t, p, 0, 50)
			waitFor(t, "50 batches", 10*time.Second, func() bool { return len(rec.real()) == 50 })
			if got := rec.real(); !reflect.DeepEqual(got, seqRange(0, 50)) {
				t.Fatalf("delivered %v", got)
			}
			st := s.Stats()
			if st.Gaps != 0 || st.Missed != 0 || st.DecodeErrors != 0 || !st.Connected || st.LastEventTime.IsZero() {
				t.Fatalf("stats %+v", st)
			}
			rec.mu.Lock()
			first := rec.got[len(rec.got)-1]
			rec.mu.Unlock()
			if first.key != "10.0.0.1:8000" || len(first.b.Events) != 1 {
				t.Fatalf("last batch %+v", first)
			}
		})
	}
}

func TestTopicFilter(t *testing.T) {
	p := newTestPublisher(t, PublisherOptions{Topic: "other"})
	s := NewSubscriber(SubscriberOptions{Endpoint: p.Endpoint(), Topic: "kv"}, &recorder{}, testLog(t))
	startSubscriber(t, s)
	waitFor(t, "connection", 5*time.Second, func() bool { return s.Stats().Connected })
	for i := 0; i < 20; i++ {
		publishReal(t, p, i, 1)
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // give a wrongly delivered message time to show up
	if st := s.Stats(); st.HaveSeq || st.Received != 0 {
		t.Fatalf("received another topic: %+v", st)
	}
}

// Gaps are recovered through replay in both answer layouts: vLLM's original
// [seq, payload] and, since v0.26, [topic, seq, payload] (with an empty topic
// too, as vLLM's default topic is "").
func TestGapRecoveredThroughReplay(t *testing.T) {
	for _, tc := range []struct {
		name        string
		topic       string
		replayTopic bool
	}{{"seq and payload", "kv", false}, {"topic first", "kv@10.0.0.1@m", true}, {"empty topic first", "", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPublisher(t, PublisherOptions{ReplayEndpoint: "tcp://127.0.0.1:0", Topic: tc.topic,
				ReplayTopic: tc.replayTopic, DropFraction: 0.3, Seed: 7})
			rec := &recorder{}
			s := NewSubscriber(SubscriberOptions{Endpoint: p.Endpoint(), ReplayEndpoint: p.ReplayEndpoint(), EndpointKey: "ep"}, rec, testLog(t))
			startSubscriber(t, s)
			warmUp(t, p, s)
			publishReal(t, p, 0, 200)
			// A dropped tail is only noticed when a later message arrives.
			publishUntil(t, p, "200 batches", func(uint64) bool { return len(rec.real()) >= 200 })
			if got := rec.real(); !reflect.DeepEqual(got, seqRange(0, 200)) {
				t.Fatalf("delivered %d batches, want 0..199 exactly once in order: %v", len(got), got)
			}
			st := s.Stats()
			if p.Dropped() == 0 || st.Gaps == 0 || st.Replayed == 0 || st.Missed != 0 {
				t.Fatalf("dropped %d, stats %+v", p.Dropped(), st)
			}
		})
	}
}

func TestGapWithoutReplayIsCounted(t *testing.T) {
	p := newTestPublisher(t, PublisherOptions{DropFraction: 0.5, Seed: 3})
	rec := &recorder{}
	s := NewSubscriber(SubscriberOptions{Endpoint: p.Endpoint(), EndpointKey: "ep"}, rec, testLog(t))
	startSubscriber(t, s)
	warmUp(t, p, s)
	s0 := s.Stats()
	publishReal(t, p, 0, 100)
	publishUntil(t, p, "a probe past the real batches", func(uint64) bool {
		return s.Stats().LastSeq > s0.LastSeq+100
	})
	st := s.Stats()
	if st.Gaps == 0 || st.Missed == 0 || st.Replayed != 0 {
		t.Fatalf("stats %+v", st)
	}
	if covered := (st.Received - s0.Received) + (st.Missed - s0.Missed); covered != st.LastSeq-s0.LastSeq {
		t.Fatalf("received+missed = %d, want every sequence in (%d, %d]", covered, s0.LastSeq, st.LastSeq)
	}
	got := rec.real()
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("out of order: %v", got)
		}
	}
}

func TestPublisherRestart(t *testing.T) {
	a := newTestPublisher(t, PublisherOptions{ReplayEndpoint: "tcp://127.0.0.1:0"})
	pubEP, replayEP := a.Endpoint(), a.ReplayEndpoint()
	rec := &recorder{}
	s := NewSubscriber(SubscriberOptions{Endpoint: pubEP, ReplayEndpoint: replayEP, EndpointKey: "ep"}, rec, testLog(t))
	startSubscriber(t, s)
	warmUp(t, a, s)
	publishReal(t, a, 0, 60)
	waitFor(t, "first stream", 10*time.Second, func() bool { return len(rec.real()) == 60 })
	a.Close()

	b := newTestPublisher(t, PublisherOptions{Endpoint: pubEP, ReplayEndpoint: replayEP})
	publishUntil(t, b, "reconnect", func(uint64) bool { return s.Stats().Restarts == 1 })
	// The restart is seen through the replay socket, which can reconnect
	// before the live one has subscribed again: batches published in
	// between are dropped by PUB and, with none after them, no gap shows.
	// An engine keeps publishing and the next batch shows the gap; the test
	// waits for live delivery instead, and a probe lost on the way is a gap
	// the replay fills, not one the restart made.
	if st := s.Stats(); st.Gaps != 0 {
		t.Fatalf("the restart counted as a gap: %+v", st)
	}
	live := s.Stats().Received
	publishUntil(t, b, "live delivery from the new publisher", func(uint64) bool { return s.Stats().Received > live })
	probeGaps := s.Stats().Gaps
	publishReal(t, b, 100, 10)
	waitFor(t, "second stream", 10*time.Second, func() bool { return len(rec.real()) == 70 })
	want := append(seqRange(0, 60), seqRange(100, 10)...)
	if got := rec.real(); !reflect.DeepEqual(got, want) {
		t.Fatalf("delivered %v", got)
	}
	if st := s.Stats(); st.Gaps != probeGaps || st.Missed != 0 || st.Restarts != 1 || rec.clears() != 1 {
		t.Fatalf("clears %d, gaps before the real batches %d, stats %+v", rec.clears(), probeGaps, st)
	}
}

// A restarted publisher that has counted past the old one's last sequence
// before the subscriber reconnects is still recognised (its replay holds
// another batch under that sequence): the old blocks are cleared and the new
// stream is caught up from its start, not treated as a gap in the old one.
func TestPublisherRestartPastOldSequence(t *testing.T) {
	a := newTestPublisher(t, PublisherOptions{ReplayEndpoint: "tcp://127.0.0.1:0"})
	pubEP, replayEP := a.Endpoint(), a.ReplayEndpoint()
	rec := &recorder{}
	s := NewSubscriber(SubscriberOptions{Endpoint: pubEP, ReplayEndpoint: replayEP, EndpointKey: "ep"}, rec, testLog(t))
	startSubscriber(t, s)
	warmUp(t, a, s)
	publishReal(t, a, 0, 20)
	waitFor(t, "first stream", 10*time.Second, func() bool { return len(rec.real()) == 20 })
	oldLast := s.Stats().LastSeq
	a.Close()

	b := newTestPublisher(t, PublisherOptions{Endpoint: pubEP, ReplayEndpoint: replayEP})
	n := int(oldLast) + 50 // published at once: the subscriber is still backing off
	publishReal(t, b, 100, n)
	publishUntil(t, b, "restart detected", func(uint64) bool { return len(rec.real()) >= 20+n })
	want := append(seqRange(0, 20), seqRange(100, n)...)
	if got := rec.real(); !reflect.DeepEqual(got[:len(want)], want) {
		t.Fatalf("delivered %v, want %v", got, want)
	}
	if st := s.Stats(); st.Restarts != 1 || st.Missed != 0 || rec.clears() != 1 {
		t.Fatalf("clears %d, stats %+v", rec.clears(), st)
	}
}

// A restarted publisher that has published nothing yet is recognised as soon
// as the subscriber reconnects (its replay buffer lacks the last sequence):
// the old blocks do not wait for the engine's first new batch to go.
func TestPublisherRestartSilent(t *testing.T) {
	a := newTestPublisher(t, PublisherOptions{ReplayEndpoint: "tcp://127.0.0.1:0"})
	pubEP, replayEP := a.Endpoint(), a.ReplayEndpoint()
	rec := &recorder{}
	s := NewSubscriber(SubscriberOptions{Endpoint: pubEP, ReplayEndpoint: replayEP, EndpointKey: "ep"}, rec, testLog(t))
	startSubscriber(t, s)
	warmUp(t, a, s)
	publishReal(t, a, 0, 5)
	waitFor(t, "first stream", 10*time.Second, func() bool { return len(rec.real()) == 5 })
	a.Close()
	newTestPublisher(t, PublisherOptions{Endpoint: pubEP, ReplayEndpoint: replayEP})
	waitFor(t, "the clear", 10*time.Second, func() bool { return rec.clears() == 1 })
	if st := s.Stats(); st.Restarts != 1 || st.HaveSeq {
		t.Fatalf("stats %+v", st)
	}
}

// A subscriber that reconnects to the same publisher (a network blip) keeps
// its blocks: the replay still holds the batch delivered last.
func TestReconnectSamePublisherKeepsBlocks(t *testing.T) {
	p := newTestPublisher(t, PublisherOptions{ReplayEndpoint: "tcp://127.0.0.1:0"})
	rec := &recorder{}
	s := NewSubscriber(SubscriberOptions{Endpoint: p.Endpoint(), ReplayEndpoint: p.ReplayEndpoint(), EndpointKey: "ep"}, rec, testLog(t))
	if s.publisherChanged(context.Background()) {
		t.Fatal("a subscriber with no sequence yet saw a change")
	}
	startSubscriber(t, s)
	warmUp(t, p, s)
	publishReal(t, p, 0, 5)
	waitFor(t, "stream", 10*time.Second, func() bool { return len(rec.real()) == 5 })
	time.Sleep(50 * time.Millisecond) // Run owns the sequence state; it is idle now
	if s.publisherChanged(context.Background()) {
		t.Fatal("the same publisher was taken for a restarted one")
	}
}

// A subscriber that starts after its publisher went quiet gets the buffered
// batches at once through replay: a restarted picker knows an idle engine's
// cache before any new event. What follows live is delivered once, in order.
func TestCatchUpOnFirstContact(t *testing.T) {
	p := newTestPublisher(t, PublisherOptions{ReplayEndpoint: "tcp://127.0.0.1:0"})
	publishReal(t, p, 0, 30)
	rec := &recorder{}
	s := NewSubscriber(SubscriberOptions{Endpoint: p.Endpoint(), ReplayEndpoint: p.ReplayEndpoint(), EndpointKey: "ep"}, rec, testLog(t))
	startSubscriber(t, s)
	waitFor(t, "the buffer replayed", 10*time.Second, func() bool { return len(rec.real()) == 30 })
	publishUntil(t, p, "live batches", func(uint64) bool { return s.Stats().Received > 0 })
	publishReal(t, p, 30, 10)
	publishUntil(t, p, "the last batches", func(uint64) bool { return len(rec.real()) >= 40 })
	if got := rec.real(); !reflect.DeepEqual(got, seqRange(0, 40)) {
		t.Fatalf("delivered %v", got)
	}
	if st := s.Stats(); st.Restarts != 0 || rec.clears() != 0 || st.Replayed < 30 {
		t.Fatalf("clears %d, stats %+v", rec.clears(), st)
	}
}

// TestReplayWireFormat talks to the replay ROUTER with a raw DEALER, as a
// libzmq client would, in both answer layouts: vLLM's original and, since
// v0.26, the topic before each sequence (an empty one before the end marker).
func TestReplayWireFormat(t *testing.T) {
	for _, replayTopic := range []bool{false, true} {
		p := newTestPublisher(t, PublisherOptions{ReplayEndpoint: "tcp://127.0.0.1:0", BufferSteps: 3, Topic: "kv@pod@m",
			ReplayTopic: replayTopic})
		var payloads [][]byte
		for i := 0; i < 5; i++ {
			b := Batch{TS: float64(i)}
			if _, err := p.Publish(b); err != nil {
				t.Fatal(err)
			}
			enc, _ := Encode(b, EncodingArray)
			payloads = append(payloads, enc)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		d := zmq4.NewDealer(ctx)
		if err := d.Dial(p.ReplayEndpoint()); err != nil {
			t.Fatal(err)
		}
		if err := d.Send(zmq4.NewMsgFrom([]byte{}, seqBytes(1))); err != nil {
			t.Fatal(err)
		}
		head := func(topic string) [][]byte {
			if replayTopic {
				return [][]byte{{}, []byte(topic)}
			}
			return [][]byte{{}}
		}
		for _, seq := range []uint64{2, 3, 4} { // 1 has left the 3-batch buffer
			msg, err := d.Recv()
			if err != nil {
				t.Fatal(err)
			}
			want := append(head("kv@pod@m"), seqBytes(seq), payloads[seq])
			if !reflect.DeepEqual(msg.Frames, want) {
				t.Fatalf("topic %v, seq %d: frames %x, want %x", replayTopic, seq, msg.Frames, want)
			}
		}
		msg, err := d.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if want := append(head(""), endSeq, []byte{}); !reflect.DeepEqual(msg.Frames, want) {
			t.Fatalf("topic %v: end marker %x, want %x", replayTopic, msg.Frames, want)
		}
		d.Close()
		cancel()
	}
}

func TestPublisherCloseTwice(t *testing.T) {
	p, err := NewPublisher(context.Background(), PublisherOptions{Endpoint: "tcp://127.0.0.1:0", ReplayEndpoint: "tcp://127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	first := p.Close()
	if second := p.Close(); !errors.Is(second, first) && second != first {
		t.Fatalf("second Close = %v, first = %v", second, first)
	}
}

func TestPublisherFrames(t *testing.T) {
	p := newTestPublisher(t, PublisherOptions{Topic: "t", Encoding: EncodingMap})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub := zmq4.NewSub(ctx)
	defer sub.Close()
	if err := sub.Dial(p.Endpoint()); err != nil {
		t.Fatal(err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		t.Fatal(err)
	}
	got := make(chan zmq4.Msg, 1)
	go func() {
		m, _ := sub.Recv()
		got <- m
	}()
	var msg zmq4.Msg
	for i := 0; ; i++ {
		if _, err := p.Publish(Batch{TS: 1}); err != nil {
			t.Fatal(err)
		}
		select {
		case msg = <-got:
		case <-time.After(20 * time.Millisecond):
			continue
		}
		break
	}
	want, _ := Encode(Batch{TS: 1}, EncodingMap)
	if len(msg.Frames) != 3 || string(msg.Frames[0]) != "t" || len(msg.Frames[1]) != 8 || !bytes.Equal(msg.Frames[2], want) {
		t.Fatalf("frames %x", msg.Frames)
	}
}

func TestPublisherOptionsValidate(t *testing.T) {
	cases := []PublisherOptions{
		{},
		{Endpoint: "tcp://127.0.0.1:0", DropFraction: 1},
		{Endpoint: "tcp://127.0.0.1:0", BufferSteps: -1},
		{Endpoint: "tcp://127.0.0.1:0", Encoding: 5},
		{Endpoint: "nope://x"},
		{Endpoint: "tcp://127.0.0.1:0", ReplayEndpoint: "nope://x"},
	}
	for _, o := range cases {
		if p, err := NewPublisher(context.Background(), o); err == nil {
			p.Close()
			t.Errorf("NewPublisher(%+v) succeeded", o)
		}
	}
}
