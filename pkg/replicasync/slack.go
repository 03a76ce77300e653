package replicasync

import (
	"time"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// lagWindow is how long one apply lag keeps counting towards the queue
// slack: the slack follows the worst lag of the current and the previous
// window, so a spike widens it for one to two windows and a calm link
// narrows it again within two. Shorter forgets a recurring tail between its
// spikes (a saturated host's lag comes in bursts); longer keeps a slack a
// past spike needed while the order could be kept tighter.
const lagWindow = time.Second

// lagHigh tracks the worst apply lag over the last one to two windows.
type lagHigh struct {
	start     time.Time // when the current window began
	cur, prev time.Duration
}

// observe records lag applied at now and returns the worst of the current
// and previous windows.
func (h *lagHigh) observe(lag time.Duration, now time.Time) time.Duration {
	if el := now.Sub(h.start); el >= lagWindow || el < 0 {
		h.prev = h.cur
		if el >= 2*lagWindow || el < 0 {
			h.prev = 0 // a quiet link: the old window says nothing of now
		}
		h.cur, h.start = 0, now
	}
	h.cur = max(h.cur, lag)
	return max(h.cur, h.prev)
}

// batchLag is how old a batch's oldest live event was when it applied: its
// delivery delay, its time in the sender's queue and any clock skew between
// the two hosts. A waiting event carries its enqueue time and a snapshot's
// events (Seq 0) the time of the state they copy, not when they were sent,
// so both are skipped; ok is false when nothing is left.
func batchLag(evs []Event, now time.Time) (lag time.Duration, ok bool) {
	for i := range evs {
		if ev := &evs[i]; ev.Kind != KindWaiting && ev.Seq != 0 && !ev.At.IsZero() {
			return max(now.Sub(ev.At), 0), true
		}
	}
	return 0, false
}

// followLag widens the queue slack to the recent worst apply lag, at least
// Sync.QueueSlack. A peer's request that left its queue is seen waiting
// here for one lag longer; in a queue that drains in order, the requests it
// left just before this replica's own were enqueued about that long before
// them, so a slack shorter than the lag holds requests for peers' requests
// already gone, with the room idle (the routebench table of sync delay
// against slack in the README). Past Sync.QueueSlackMax the links are too
// slow for a shared order to pay, and Ahead gives way to no peer until the
// lag comes back under (see suspends). Callers hold r.rmu.
func (r *Replica) followLag(lag time.Duration, now time.Time) {
	hi := r.lag.observe(lag, now)
	s := r.opts.Sync.QueueSlack.Duration
	if r.slackMax() > s {
		s = max(hi, s)
	}
	if int64(s) != r.slack.Swap(int64(s)) {
		telemetry.ReplicaSyncQueueSlack.Set(s.Seconds())
	}
}

// slackMax is how far the slack may follow the lag; at or below QueueSlack
// the slack is fixed.
func (r *Replica) slackMax() time.Duration {
	return max(r.opts.Sync.QueueSlackMax.Duration, r.opts.Sync.QueueSlack.Duration)
}

// QueueSlack is the slack Ahead applies now (see followLag); past
// QueueSlackMax the shared order is suspended.
func (r *Replica) QueueSlack() time.Duration { return time.Duration(r.slack.Load()) }

// suspends reports whether slack (a QueueSlack reading) is past
// QueueSlackMax: this replica then orders its own queue only, as with
// queueOrder local.
func (r *Replica) suspends(slack time.Duration) bool { return slack > r.slackMax() }
