package kvindex

// none is the null node index.
const none = ^uint32(0)

// node is one held block in an endpoint's LRU list.
type node struct {
	hash       uint64
	tv         uint64 // touch<<1 | observed bit; touch is the endpoint clock at the last touch
	newer, old uint32 // neighbours in touch order, none at the ends
}

// lru keeps an endpoint's blocks in touch order as a doubly linked list over
// a slice, so re-touching a held block is O(1) and leaves no stale entry
// behind: earlier a touch appended to a log that had to be filtered with a
// table lookup per entry, which was most of RecordPredicted's cost.
// Freed nodes are chained through old.
type lru struct {
	nodes          []node
	newest, oldest uint32
	free           uint32
	live           int
}

func newLRU() lru { return lru{newest: none, oldest: none, free: none} }

// add stores a new node as the newest and returns its index.
func (l *lru) add(h, tv uint64) uint32 {
	i := l.free
	if i == none {
		i = uint32(len(l.nodes))
		l.nodes = append(l.nodes, node{})
	} else {
		l.free = l.nodes[i].old
	}
	l.nodes[i] = node{hash: h, tv: tv, newer: none, old: none}
	l.link(i)
	l.live++
	return i
}

// touch sets node i's tv and makes it the newest.
func (l *lru) touch(i uint32, tv uint64) {
	l.nodes[i].tv = tv
	if l.newest != i {
		l.unlink(i)
		l.link(i)
	}
}

// remove unlinks node i and frees it.
func (l *lru) remove(i uint32) {
	l.unlink(i)
	l.nodes[i] = node{old: l.free}
	l.free = i
	l.live--
}

// link makes the unlinked node i the newest.
func (l *lru) link(i uint32) {
	n := &l.nodes[i]
	n.newer, n.old = none, l.newest
	if l.newest != none {
		l.nodes[l.newest].newer = i
	} else {
		l.oldest = i
	}
	l.newest = i
}

func (l *lru) unlink(i uint32) {
	n := l.nodes[i]
	if n.newer != none {
		l.nodes[n.newer].old = n.old
	} else {
		l.newest = n.old
	}
	if n.old != none {
		l.nodes[n.old].newer = n.newer
	} else {
		l.oldest = n.newer
	}
}

// addOldest stores a new node as the oldest and returns its index: a block
// an eviction took back (see Claim.evicted), older than every node left.
func (l *lru) addOldest(h, tv uint64) uint32 {
	i := l.add(h, tv)
	l.unlink(i)
	n := &l.nodes[i]
	n.newer, n.old = l.oldest, none
	if l.oldest != none {
		l.nodes[l.oldest].old = i
	} else {
		l.newest = i
	}
	l.oldest = i
	return i
}
