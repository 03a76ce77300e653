package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/tokenize"
)

type zmqMsg struct {
	seq     uint64
	payload []byte
	bad     string // frames that are not [topic, 8-byte seq, payload]
}

// subscribe dials a real ZMQ SUB socket and streams [topic, seq, payload]
// messages into a channel.
func subscribe(t *testing.T, ctx context.Context, endpoint, topic string) <-chan zmqMsg {
	t.Helper()
	sub := zmq4.NewSub(ctx)
	t.Cleanup(func() { sub.Close() })
	if err := sub.Dial(endpoint); err != nil {
		t.Fatal(err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, topic); err != nil {
		t.Fatal(err)
	}
	ch := make(chan zmqMsg, 1024)
	go func() {
		for {
			m, err := sub.Recv()
			if err != nil {
				return
			}
			if len(m.Frames) != 3 || string(m.Frames[0]) != topic || len(m.Frames[1]) != 8 {
				ch <- zmqMsg{bad: fmt.Sprintf("%q", m.Frames)}
				continue
			}
			ch <- zmqMsg{seq: binary.BigEndian.Uint64(m.Frames[1]), payload: m.Frames[2]}
		}
	}()
	return ch
}

// resetUntilSeen publishes AllBlocksCleared until one arrives (batches may be
// dropped on purpose), collecting everything received meanwhile.
func resetUntilSeen(t *testing.T, s *server, ch <-chan zmqMsg, got map[uint64][]byte) uint64 {
	t.Helper()
	for range 200 {
		s.run.resetCache()
		deadline := time.After(100 * time.Millisecond)
		for {
			select {
			case m := <-ch:
				if m.bad != "" {
					t.Fatalf("bad message frames %s", m.bad)
				}
				got[m.seq] = m.payload
				if b, err := kvevents.Decode(m.payload); err == nil && len(b.Events) == 1 &&
					kvevents.EventType(b.Events[0]) == kvevents.TagAllBlocksCleared {
					return m.seq
				}
				continue
			case <-deadline:
			}
			break
		}
	}
	t.Fatal("no AllBlocksCleared batch arrived")
	return 0
}

// replay asks the ROUTER for every batch from start, as a DEALER client.
// Each answer must carry topic before its sequence (an empty one before the
// end marker), as vLLM's since v0.26, unless topic is nil: then [seq, payload].
func replay(t *testing.T, ctx context.Context, endpoint string, start uint64, topic []byte) map[uint64][]byte {
	t.Helper()
	d := zmq4.NewDealer(ctx)
	defer d.Close()
	if err := d.Dial(endpoint); err != nil {
		t.Fatal(err)
	}
	if err := d.Send(zmq4.NewMsgFrom([]byte{}, binary.BigEndian.AppendUint64(nil, start))); err != nil {
		t.Fatal(err)
	}
	out := map[uint64][]byte{}
	for {
		m, err := d.Recv()
		if err != nil {
			t.Fatal(err)
		}
		f := m.Frames
		if len(f) == 0 || len(f[0]) != 0 {
			t.Fatalf("replay frames %q without the empty delimiter", f)
		}
		f = f[1:]
		if topic != nil {
			if len(f) != 3 {
				t.Fatalf("replay frames %q, want [topic, seq, payload]", m.Frames)
			}
			end := len(f[1]) == 8 && int64(binary.BigEndian.Uint64(f[1])) == -1
			if want := topic; end && len(f[0]) != 0 || !end && !bytes.Equal(f[0], want) {
				t.Fatalf("replay topic %q, want %q (empty before the end marker)", f[0], want)
			}
			f = f[1:]
		}
		if len(f) != 2 || len(f[0]) != 8 {
			t.Fatalf("bad replay frames %q", m.Frames)
		}
		if int64(binary.BigEndian.Uint64(f[0])) == -1 {
			return out
		}
		out[binary.BigEndian.Uint64(f[0])] = f[1]
	}
}

func TestKVEventsOverZMQ(t *testing.T) {
	for _, enc := range []string{"array", "map", "mixed"} {
		t.Run(enc, func(t *testing.T) { testKVEvents(t, enc) })
	}
}

func testKVEvents(t *testing.T, enc string) {
	args := []string{"--kv-events-endpoint", "tcp://127.0.0.1:0", "--kv-events-replay-endpoint",
		"tcp://127.0.0.1:0", "--kv-events-topic", "kv@sim", "--kv-events-encoding", enc, "--dp-rank", "2",
		"--drop-events-fraction", "0.4", "--block-size", "4", "--seed", "7"}
	topic := []byte("kv@sim") // current vLLM's replay layout
	if enc == "array" {       // SGLang's and older vLLM's
		args, topic = append(args, "--kv-events-replay-plain"), nil
	}
	url, s := startServer(t, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch := subscribe(t, ctx, s.kv.pub.Endpoint(), "kv@sim")
	got := map[uint64][]byte{}
	first := resetUntilSeen(t, s, ch, got)
	var prompts []string
	for i := range 10 {
		p := fmt.Sprintf("request %d asks about the weather in city number %d today", i, i*7)
		prompts = append(prompts, p)
		if resp, data := post(t, url+"/v1/completions", fmt.Sprintf(`{"model":"modelsim","prompt":%q,"max_tokens":3}`, p)); resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, data)
		}
	}
	last := resetUntilSeen(t, s, ch, got)
	var missing []uint64
	for seq := first; seq <= last; seq++ {
		if got[seq] == nil {
			missing = append(missing, seq)
		}
	}
	if len(missing) == 0 {
		t.Fatal("no sequence gap although 40% of batches are dropped")
	}
	replayed := replay(t, ctx, s.kv.pub.ReplayEndpoint(), missing[0], topic)
	for seq := missing[0]; seq <= last; seq++ {
		p, ok := replayed[seq]
		if !ok || (got[seq] != nil && !bytes.Equal(got[seq], p)) {
			t.Fatalf("replay of seq %d missing or different from what was published", seq)
		}
		got[seq] = p
	}
	checkBatches(t, got, first, last, enc, prompts)
}

// checkBatches decodes every batch and checks the stored chains cover each
// prompt's full blocks with the right token ids and parent links.
func checkBatches(t *testing.T, got map[uint64][]byte, first, last uint64, enc string, prompts []string) {
	t.Helper()
	stored := map[uint64][]uint32{} // hash -> tokens of its block
	parent := map[uint64]*uint64{}
	for seq := first; seq <= last; seq++ {
		payload := got[seq]
		if isMap := payload[0]&0xf0 == 0x80; isMap != (enc == "map") {
			t.Fatalf("seq %d: payload starts 0x%x, want %s encoding", seq, payload[0], enc)
		}
		b, err := kvevents.Decode(payload)
		if err != nil || b.DPRank == nil || *b.DPRank != 2 || b.TS < 1e9 {
			t.Fatalf("seq %d: batch %+v err %v", seq, b, err)
		}
		for _, ev := range b.Events {
			st, ok := ev.(kvevents.BlockStored)
			if !ok {
				continue
			}
			if st.BlockSize != 4 || len(st.TokenIDs) != 4*len(st.BlockHashes) || st.Medium != "GPU" {
				t.Fatalf("malformed BlockStored %+v", st)
			}
			prev := st.Parent
			for i, h := range st.BlockHashes {
				stored[h], parent[h] = st.TokenIDs[i*4:(i+1)*4], prev
				prev = &st.BlockHashes[i]
			}
		}
	}
	for _, p := range prompts {
		want := tokenize.Approx(nil, p)
		if !chainMatches(stored, parent, want[:len(want)/4*4]) {
			t.Fatalf("no stored chain carries the tokens of %q", p)
		}
	}
}

// chainMatches finds a root block whose chain carries tokens.
func chainMatches(stored map[uint64][]uint32, parent map[uint64]*uint64, tokens []uint32) bool {
	var prev *uint64
	for i := 0; i < len(tokens); i += 4 {
		found := false
		for h, tok := range stored {
			p := parent[h]
			if slices.Equal(tok, tokens[i:i+4]) && ((prev == nil && p == nil) || (prev != nil && p != nil && *p == *prev)) {
				hh := h
				prev, found = &hh, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// The SGLang and hybrid-vLLM dialects dress a store as those engines send it.
func TestDialectApply(t *testing.T) {
	store := kvevents.BlockStored{BlockHashes: []uint64{1, 2}, TokenIDs: []uint32{1, 2}, BlockSize: 1, Medium: "GPU"}
	b := kvevents.Batch{Events: []kvevents.Event{store, kvevents.AllBlocksCleared{}}}
	salted := dialect{salt: "s"}.apply(b)
	if s := salted.Events[0].(kvevents.BlockStored); s.CacheSalt != "s" || len(salted.Events) != 2 {
		t.Fatalf("salted %#v", salted.Events)
	}
	off := dialect{offload: true}.apply(b).Events
	if len(off) != 3 || off[0].(kvevents.BlockStored).Medium != "CPU" || off[1].(kvevents.BlockStored).Medium != "GPU" {
		t.Fatalf("offload %#v, want the CPU copy, the GPU store, the clear", off)
	}
	hy := dialect{hybrid: true}.apply(b).Events
	if len(hy) != 4 {
		t.Fatalf("hybrid events %#v, want full store, window store, window removal, clear", hy)
	}
	full, window, gone := hy[0].(kvevents.BlockStored), hy[1].(kvevents.BlockStored), hy[2].(kvevents.BlockRemoved)
	if full.GroupIdx != 0 || full.SpecKind != SpecFullAttention || len(full.ExtraKeys) != 2 ||
		window.GroupIdx != 1 || window.SpecKind != SpecSlidingWindow || gone.GroupIdx != 1 || len(gone.BlockHashes) != 2 {
		t.Fatalf("hybrid %#v", hy)
	}
}
