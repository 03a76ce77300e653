package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/kvpick/kvpick/pkg/engine"
	"github.com/kvpick/kvpick/pkg/kvevents"
)

// kvPublisher turns the engine's KV changes into vLLM event batches on ZMQ.
type kvPublisher struct {
	pub    *kvevents.Publisher
	dpRank *int
	errs   int
}

func newKVPublisher(ctx context.Context, o options) (*kvPublisher, error) {
	enc := kvevents.EncodingMap
	if o.kvEncoding == "array" {
		enc = kvevents.EncodingArray
	}
	pub, err := kvevents.NewPublisher(ctx, kvevents.PublisherOptions{Endpoint: o.kvEndpoint,
		ReplayEndpoint: o.kvReplay, Topic: o.kvTopic, Encoding: enc, BufferSteps: o.kvBufferSteps,
		DropFraction: o.dropEvents, Seed: o.engine.Seed})
	if err != nil {
		return nil, fmt.Errorf("kv events: %w", err)
	}
	p := &kvPublisher{pub: pub}
	if o.dpRank >= 0 {
		rank := o.dpRank
		p.dpRank = &rank
	}
	return p, nil
}

// publish sends one step's events as one batch. It runs on the runner's
// goroutine only.
func (p *kvPublisher) publish(ts time.Time, evs []engine.KVEvent) {
	b := toBatch(ts, evs, p.dpRank)
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
