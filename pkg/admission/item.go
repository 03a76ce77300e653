package admission

import (
	"slices"
	"sort"
	"time"
)

// Item is one request waiting for admission. The caller fills the exported
// fields; the rest is the queue's bookkeeping. An Item may be queued in at most
// one Core at a time and may be pushed again after it has left.
type Item[T any] struct {
	// Priority orders the queue: higher first. Negative means sheddable: the
	// item may be evicted by a higher-priority arrival when the queue is full.
	Priority int
	// ISLTokens is the prompt length, summed into the pending-tokens gauge.
	ISLTokens int
	// Work is the request's prefill work (its prompt tokens no endpoint
	// holds cached), the wspt order's key; 0 means ISLTokens.
	Work int
	// Value is the caller's payload (e.g. the request); the queue never reads it.
	Value T
	// Group names items with the same eligible endpoints (for the router:
	// one model, adapter and subset hint). When canDispatch refuses one and
	// calls RefuseGroup (the refusal holds for the whole group, e.g. no
	// eligible endpoint has room), the later items of the group are not
	// asked in that Release pass: capacity only shrinks within a pass, and
	// a full queue is otherwise scanned whole on every notification.
	Group string

	owner    *Core[T]
	lvl      *level[T]
	prev     *Item[T]
	next     *Item[T]
	seq      uint64
	tokens   int // ISLTokens as counted at Push, so later edits cannot skew the sum
	class    int // workClass of the work at Push: the wspt order's key
	enqueued time.Time
	deadline time.Time
	wake     chan error // set by Queue for a blocked Admit; nil in Core-only use
	groupOff bool       // canDispatch refused it for its whole Group (RefuseGroup)
}

// RefuseGroup tells Release, from inside canDispatch refusing it, that the
// refusal holds for every item of its Group in this pass.
func (it *Item[T]) RefuseGroup() { it.groupOff = true }

// Pass identifies the Release pass now asking canDispatch about the item,
// unique across Cores; 0 outside one. Capacity only shrinks within a pass, so
// canDispatch may remember under it what it found for a whole class of items.
func (it *Item[T]) Pass() uint64 {
	if it.owner == nil {
		return 0
	}
	return it.owner.pass
}

// Aging is the tiering of the queue the item waits in (zero when it waits
// in none), for comparing it with requests waiting elsewhere (Rank.BeforeAt).
func (it *Item[T]) Aging() Aging {
	if it.owner == nil {
		return Aging{}
	}
	return it.owner.Aging()
}

// Queued reports whether the item is waiting in a Core. Not safe to call
// concurrently with that Core's methods.
func (it *Item[T]) Queued() bool { return it.owner != nil }

// EnqueuedAt is the time the item was last pushed.
func (it *Item[T]) EnqueuedAt() time.Time { return it.enqueued }

// Deadline is the time after which the last push expires (EnqueuedAt + MaxWait).
func (it *Item[T]) Deadline() time.Time { return it.deadline }

// work is the wspt key: Work, or the prompt length when Work is unset.
func (it *Item[T]) work() int {
	if it.Work > 0 {
		return it.Work
	}
	return it.tokens
}

// level is the FIFO of all queued items of one priority: a doubly linked list,
// so that append, unlink and in-order walks are all O(1) per item. byClass
// holds the same items in wspt order (work class, then push order), kept
// sorted as items come and go, so a release pass over a long queue reads it
// instead of sorting the whole queue again.
type level[T any] struct {
	prio    int
	head    *Item[T]
	tail    *Item[T]
	byClass []*Item[T]
}

func (l *level[T]) append(it *Item[T]) {
	it.lvl, it.prev, it.next = l, l.tail, nil
	if l.tail != nil {
		l.tail.next = it
	} else {
		l.head = it
	}
	l.tail = it
	// Push order only grows, so it goes after every item of its class.
	i := sort.Search(len(l.byClass), func(i int) bool { return l.byClass[i].class > it.class })
	l.byClass = slices.Insert(l.byClass, i, it)
}

// classIndex is it's position in byClass (it must be there).
func (l *level[T]) classIndex(it *Item[T]) int {
	return sort.Search(len(l.byClass), func(i int) bool {
		o := l.byClass[i]
		return o.class > it.class || o.class == it.class && o.seq >= it.seq
	})
}

func (l *level[T]) unlink(it *Item[T]) {
	if i := l.classIndex(it); i < len(l.byClass) && l.byClass[i] == it {
		l.byClass = slices.Delete(l.byClass, i, i+1)
	}
	if it.prev != nil {
		it.prev.next = it.next
	} else {
		l.head = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	} else {
		l.tail = it.prev
	}
	it.lvl, it.prev, it.next = nil, nil, nil
}

func (l *level[T]) empty() bool { return l.head == nil }
