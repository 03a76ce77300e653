package kvevents

import (
	"fmt"
)

// Decode parses one msgpack EventBatch. It accepts the positional (array) and
// the tagged-map encodings at both the batch and the event level, in any mix;
// trailing positional fields may be missing and unknown map keys are ignored.
// Events with an unknown tag are dropped and counted in Batch.Skipped; a known
// event with a malformed field is dropped and counted in Batch.Invalid (its
// neighbours are kept, so one bad event never loses a batch's removals). A
// batch whose msgpack structure is broken fails as a whole. Errors wrap
// ErrMalformed and name the offending field. Decode never panics and
// allocates at most a small multiple of len(payload).
func Decode(payload []byte) (Batch, error) {
	r := newReader(payload)
	b, err := r.batch()
	if err == nil && r.remaining() > 0 {
		err = malformed("%d trailing bytes after the batch", r.remaining())
	}
	if err != nil {
		return Batch{}, fmt.Errorf("kvevents: decode: %w", err)
	}
	return b, nil
}

func (r *reader) batch() (Batch, error) {
	c, err := r.peek()
	if err != nil {
		return Batch{}, err
	}
	switch {
	case isArray(c):
		return r.batchArray()
	case isMap(c):
		return r.batchMap()
	}
	return Batch{}, malformed("batch: want array or map, got %s", codeName(c))
}

// batchArray reads [ts, events, dp_rank?, ...].
func (r *reader) batchArray() (Batch, error) {
	var b Batch
	n, err := r.arrayLen()
	if err != nil {
		return b, fmt.Errorf("batch: %w", err)
	}
	if n < 2 {
		return b, malformed("batch: array of %d elements, want at least ts and events", n)
	}
	if b.TS, err = r.float(); err != nil {
		return b, fmt.Errorf("batch: ts: %w", err)
	}
	if err = r.events(&b); err != nil {
		return b, err
	}
	if n > 2 {
		if b.DPRank, err = r.optInt(); err != nil {
			return b, fmt.Errorf("batch: %s: %w", fieldDPRank, err)
		}
	}
	return b, r.skipN(n - 3)
}

// batchMap reads {"ts": ..., "events": [...], "data_parallel_rank": ...}.
func (r *reader) batchMap() (Batch, error) {
	var b Batch
	n, err := r.mapLen()
	if err != nil {
		return b, fmt.Errorf("batch: %w", err)
	}
	sawEvents := false
	for i := 0; i < n; i++ {
		key, err := r.str()
		if err != nil {
			return b, fmt.Errorf("batch: key: %w", err)
		}
		sawEvents = sawEvents || key == fieldEvents
		if err := r.batchField(&b, key); err != nil {
			return b, fmt.Errorf("batch: %s: %w", key, err)
		}
	}
	if !sawEvents {
		return b, malformed("batch: map without %q", fieldEvents)
	}
	return b, nil
}

func (r *reader) batchField(b *Batch, key string) (err error) {
	switch key {
	case fieldTS:
		b.TS, err = r.float()
	case fieldEvents:
		err = r.events(b)
	case fieldDPRank:
		b.DPRank, err = r.optInt()
	default:
		err = r.skip()
	}
	return err
}

// resync skips the whole value that starts at start, after a field inside it
// failed to decode; it fails when the value is not well-formed msgpack.
func (r *reader) resync(start int) error {
	r.seek(start)
	return r.skip()
}

// skipN discards n values (n <= 0 is a no-op).
func (r *reader) skipN(n int) error {
	for ; n > 0; n-- {
		if err := r.skip(); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) events(b *Batch) error {
	n, err := r.arrayLen()
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	if n > 0 {
		b.Events = make([]Event, 0, n)
	}
	for i := 0; i < n; i++ {
		start := r.offset()
		e, err := r.event()
		if err != nil {
			if err := r.resync(start); err != nil {
				return fmt.Errorf("events[%d]: %w", i, err)
			}
			b.Invalid++
			if b.InvalidErr == nil {
				b.InvalidErr = fmt.Errorf("kvevents: decode: events[%d]: %w", i, err)
			}
			continue
		}
		if e == nil {
			b.Skipped++
			continue
		}
		b.Events = append(b.Events, e)
	}
	if len(b.Events) == 0 {
		b.Events = nil // one form for "no events", whatever was skipped
	}
	return nil
}
