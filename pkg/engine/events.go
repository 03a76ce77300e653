package engine

import "time"

// KVEventKind says what changed in the KV cache.
type KVEventKind uint8

// The KV cache changes an engine reports, mirroring vLLM's KV events.
const (
	BlockStored KVEventKind = iota + 1
	BlockRemoved
	AllBlocksCleared
)

// KVEvent is one change of the prefix cache. For BlockStored, Hashes are
// consecutive full blocks whose Tokens (len(Hashes)*BlockSize ids) follow the
// block hashed Parent (HasParent false at the start of a sequence). For
// BlockRemoved only Hashes is set.
type KVEvent struct {
	Kind      KVEventKind
	Hashes    []uint64
	Parent    uint64
	HasParent bool
	Tokens    []uint32
	BlockSize int
	LoRA      string
}

// KVSink receives the engine's KV cache changes. It is called synchronously
// from Step and ResetCache with the events of that call in order, stamped
// with the end of the step; it may retain the slice (the engine does not
// reuse it) but must not modify an event's Hashes or Tokens, which share
// memory with the engine; it must not call back into the engine.
type KVSink interface {
	KVEvents(ts time.Time, events []KVEvent)
}

// KVSinkFunc adapts a function to KVSink.
type KVSinkFunc func(ts time.Time, events []KVEvent)

// KVEvents calls f.
func (f KVSinkFunc) KVEvents(ts time.Time, events []KVEvent) { f(ts, events) }

// eventLog collects one call's events, merging adjacent removals.
type eventLog struct{ events []KVEvent }

// removed records the eviction of h; more (>= 1, counting h) is how many
// evictions may follow at once, to size a new event's Hashes.
func (l *eventLog) removed(h uint64, more int) {
	if n := len(l.events); n > 0 && l.events[n-1].Kind == BlockRemoved {
		l.events[n-1].Hashes = append(l.events[n-1].Hashes, h)
		return
	}
	hashes := append(make([]uint64, 0, more), h)
	l.events = append(l.events, KVEvent{Kind: BlockRemoved, Hashes: hashes})
}

func (l *eventLog) add(ev KVEvent) { l.events = append(l.events, ev) }

// flush hands the collected events to sink and starts a fresh log.
func (l *eventLog) flush(sink KVSink, ts time.Time) {
	if len(l.events) == 0 {
		return
	}
	evs := l.events
	l.events = nil
	if sink != nil {
		sink.KVEvents(ts, evs)
	}
}
