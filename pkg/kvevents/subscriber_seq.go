package kvevents

import (
	"context"
	"encoding/binary"
	"math"
	"time"
)

// onMessage handles one live [topic, seq, payload] message: it recovers any
// gap before it, then delivers it unless replay already has.
func (s *Subscriber) onMessage(ctx context.Context, frames [][]byte) {
	if len(frames) != 3 || len(frames[1]) != 8 {
		s.decodeError("unexpected frame layout", nil, "frames", len(frames))
		return
	}
	seq := binary.BigEndian.Uint64(frames[1])
	s.beforeLive(ctx, seq, frames[2])
	s.fresh = false
	if s.have && seq <= s.last {
		s.update(func(st *SubscriberStats) { st.Duplicates++ })
		return
	}
	s.deliver(seq, frames[2], false)
	s.caughtUp = false // live past what replay gave: a later seq 0 is a restart again
}

// beforeLive brings tracking up to seq-1: catch-up on first contact, restart
// detection, and gap recovery.
func (s *Subscriber) beforeLive(ctx context.Context, seq uint64, payload []byte) {
	switch {
	case !s.have:
		// First contact: the engine may have been running for a while; its
		// replay buffer is the best picture of its cache we can get.
		s.recover(ctx, 0, seq, false)
	case seq == s.last && markOf(payload) == s.lastMark:
		// The batch last delivered, live after replay brought it: a duplicate.
	case seq <= s.last && (s.fresh || (seq == 0 && !s.caughtUp)):
		// A continuing publisher never goes back, so this one restarted with an
		// empty cache (publisherChanged missed it: no replay). Say so, then
		// catch up from its new stream's start.
		s.restart(seq)
		s.recover(ctx, 0, seq, false)
	case seq > s.last+1:
		s.update(func(st *SubscriberStats) { st.Gaps++ })
		s.m.gaps.Inc()
		s.log.Info("kv event sequence gap", "after", s.last, "got", seq, "missing", seq-s.last-1)
		s.recover(ctx, s.last+1, seq, true)
	}
}

// publisherChanged reports, when a connection is made again, whether the
// publisher behind it is not the one whose batch s.last was delivered, before
// any live message: a restarted engine may publish nothing for a while, and
// one that has already counted past s.last would pass for the old one; either
// way the old blocks would stay in the index. Its replay buffer answers: a
// publisher keeps its latest batches, so the old one still holds s.last (and
// it is the batch delivered), while a new one holds another batch there or
// nothing from s.last on. Without replay, or once s.last has left a long
// buffer, it cannot tell (false).
func (s *Subscriber) publisherChanged(ctx context.Context) bool {
	if !s.have {
		return false
	}
	answered, changed := false, false
	err := s.fetchReplay(ctx, s.last, func(seq uint64, payload []byte) bool {
		answered = true
		changed = seq == s.last && markOf(payload) != s.lastMark
		return false
	})
	if err != nil {
		s.log.V(1).Info("kv event replay unavailable; publisher restart not checked", "err", err)
		return false
	}
	return changed || !answered
}

// batchMark identifies a delivered batch's payload cheaply: its length and
// first bytes, which hold the batch timestamp in both encodings.
type batchMark struct {
	n    int
	head [48]byte
}

func markOf(payload []byte) batchMark {
	m := batchMark{n: len(payload)}
	copy(m.head[:], payload)
	return m
}

// catchUp delivers, on first contact (at start or after a restart), every
// batch the publisher's replay buffer holds, without waiting for a live
// message: an idle engine's cache is known at once, so a picker that restarts
// has its view back before traffic reaches the engines again. Batches
// published while the subscription forms show up as a gap or a duplicate of
// what was caught up, both handled; a live sequence at or below the caught-up
// one is a duplicate, not a restart (publisherChanged checks for those here).
func (s *Subscriber) catchUp(ctx context.Context) {
	if s.have || s.opts.ReplayEndpoint == "" {
		return
	}
	s.recover(ctx, 0, math.MaxUint64, false)
	if s.have {
		s.fresh, s.caughtUp = false, true
	}
}

// restart forgets the old stream and clears the endpoint's blocks; seq is the
// new stream's first sequence seen (0 when found before any live message).
func (s *Subscriber) restart(seq uint64) {
	s.log.Info("kv event publisher restarted; clearing its blocks", "lastSeq", s.last, "newSeq", seq)
	s.have, s.last = false, 0
	s.update(func(st *SubscriberStats) { st.Restarts++; st.HaveSeq = false })
	s.m.restarts.Inc()
	s.h.HandleBatch(s.opts.EndpointKey, Batch{
		TS:     float64(time.Now().UnixNano()) / 1e9,
		Events: []Event{AllBlocksCleared{}},
	})
}

// recover delivers batches [from, upto) from the replay endpoint, in order and
// at most once. What it cannot get is counted as missed when countMissed.
func (s *Subscriber) recover(ctx context.Context, from, upto uint64, countMissed bool) {
	if from >= upto {
		return
	}
	next := from
	err := s.fetchReplay(ctx, from, func(seq uint64, payload []byte) bool {
		if seq >= upto {
			return false
		}
		if seq < next {
			return true // duplicate or out of order; already covered
		}
		if countMissed && seq > next {
			s.missed(seq - next)
		}
		s.deliver(seq, payload, true)
		next = seq + 1
		return true
	})
	if err != nil {
		s.log.V(1).Info("kv event replay unavailable", "from", from, "to", upto, "err", err)
	}
	if countMissed && next < upto {
		s.missed(upto - next)
	}
}

func (s *Subscriber) missed(n uint64) {
	s.update(func(st *SubscriberStats) { st.Missed += n })
	s.m.missed.Add(float64(n))
}

// deliver decodes one batch and hands it to the handler; a bad payload still
// advances the sequence, since replaying it would not make it better.
func (s *Subscriber) deliver(seq uint64, payload []byte, replayed bool) {
	s.have, s.last, s.lastMark = true, seq, markOf(payload)
	s.update(func(st *SubscriberStats) { st.LastSeq, st.HaveSeq = seq, true })
	b, err := Decode(payload)
	if err != nil {
		s.decodeError("bad payload", err, "seq", seq)
		return
	}
	if b.Invalid > 0 {
		s.log.Info("skipped invalid kv events; the rest of the batch is applied", "seq", seq, "invalid", b.Invalid, "err", b.InvalidErr)
	}
	s.h.HandleBatch(s.opts.EndpointKey, b)
	s.count(b, replayed)
}

func (s *Subscriber) count(b Batch, replayed bool) {
	s.update(func(st *SubscriberStats) {
		if replayed {
			st.Replayed++
		} else {
			st.Received++
		}
		st.SkippedEvents += uint64(b.Skipped)
		st.InvalidEvents += uint64(b.Invalid)
		st.LastEventTime = time.Now()
	})
	s.m.observe(b, replayed)
}

func (s *Subscriber) decodeError(msg string, err error, kv ...any) {
	s.update(func(st *SubscriberStats) { st.DecodeErrors++ })
	s.m.decodeErrors.Inc()
	s.log.V(1).Info("dropping kv event message: "+msg, append(kv, "err", err)...)
}
