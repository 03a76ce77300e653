package main

import (
	"context"
	"fmt"
	"log"
	"strconv"
	"strings"
	"time"

	"github.com/kvpick/kvpick/pkg/engine"
	"github.com/kvpick/kvpick/pkg/kvevents"
)

// kvEncodings are the --kv-events-encoding values.
var kvEncodings = map[string]kvevents.Encoding{"array": kvevents.EncodingArray, "map": kvevents.EncodingMap, "mixed": kvevents.EncodingMixed}

// kvPublisher turns the engine's KV changes into vLLM event batches on ZMQ.
type kvPublisher struct {
	pub    *kvevents.Publisher
	dpRank *int
	d      dialect
	errs   int
}

func newKVPublisher(ctx context.Context, o options) (*kvPublisher, error) {
	rank := max(o.dpRank, 0)
	pub, err := kvevents.NewPublisher(ctx, kvevents.PublisherOptions{Endpoint: offsetPort(o.kvEndpoint, rank),
		ReplayEndpoint: offsetPort(o.kvReplay, rank), Topic: o.kvTopic, ReplayTopic: !o.kvReplayPlain, Encoding: kvEncodings[o.kvEncoding],
		BytesHashes: o.kvBytesHashes, BufferSteps: o.kvBufferSteps, DropFraction: o.dropEvents, Seed: o.engine.Seed})
	if err != nil {
		return nil, fmt.Errorf("kv events: %w", err)
	}
	p := &kvPublisher{pub: pub, d: dialect{salt: o.kvSalt, hybrid: o.kvHybrid, offload: o.kvOffload}}
	if o.dpRank >= 0 {
		p.dpRank = &rank
	}
	return p, nil
}

// offsetPort adds a data-parallel rank to an endpoint's TCP port, as vLLM's
// and SGLang's publishers do; port 0 (any free port) is left alone.
func offsetPort(endpoint string, rank int) string {
	i := strings.LastIndex(endpoint, ":")
	if rank == 0 || i < 0 || !strings.HasPrefix(endpoint, "tcp://") {
		return endpoint
	}
	port, err := strconv.Atoi(endpoint[i+1:])
	if err != nil || port == 0 {
		return endpoint
	}
	return endpoint[:i+1] + strconv.Itoa(port+rank)
}

// publish sends one step's events as one batch. It runs on the runner's
// goroutine only.
func (p *kvPublisher) publish(ts time.Time, evs []engine.KVEvent) {
	b := p.d.apply(toBatch(ts, evs, p.dpRank))
	if _, err := p.pub.Publish(b); err != nil {
		if p.errs++; p.errs <= 10 {
			log.Printf("modelsim: %v", err)
		}
	}
}

// toBatch converts engine events to the wire model ("GPU" medium).
func toBatch(ts time.Time, evs []engine.KVEvent, dpRank *int) kvevents.Batch {
	b := kvevents.Batch{TS: float64(ts.UnixNano()) / 1e9, DPRank: dpRank, Events: make([]kvevents.Event, 0, len(evs))}
	for _, ev := range evs {
		switch ev.Kind {
		case engine.BlockStored:
			s := kvevents.BlockStored{BlockHashes: ev.Hashes, TokenIDs: ev.Tokens, BlockSize: ev.BlockSize,
				LoRAName: ev.LoRA, Medium: "GPU"}
			if ev.HasParent {
				parent := ev.Parent
				s.Parent = &parent
			}
			b.Events = append(b.Events, s)
		case engine.BlockRemoved:
			b.Events = append(b.Events, kvevents.BlockRemoved{BlockHashes: ev.Hashes, Medium: "GPU"})
		case engine.AllBlocksCleared:
			b.Events = append(b.Events, kvevents.AllBlocksCleared{})
		}
	}
	return b
}
