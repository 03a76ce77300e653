package engine

// kvCache is the block pool with prefix caching, in the manner of vLLM's:
// blocks in use are reference counted; a block whose count drops to zero joins
// the free queue but keeps its hash, so a later request with the same prefix
// can take it back; allocation takes the least recently freed block and
// evicts its hash (a BlockRemoved event).
type kvCache struct {
	blocks []kvBlock
	cached blockTable // hash -> block holding it
	// free queue, a doubly linked list threaded through blocks: head is the
	// least recently freed (next to evict), tail the most recent.
	head, tail int32
	numFree    int
	log        *eventLog
}

type kvBlock struct {
	hash       uint64
	hashed     bool
	free       bool
	ref        int32
	prev, next int32
}

const none = int32(-1)

func newKVCache(n int, log *eventLog) *kvCache {
	c := &kvCache{blocks: make([]kvBlock, n), cached: newBlockTable(n), head: none, tail: none, log: log}
	for i := range c.blocks {
		c.pushFree(int32(i))
	}
	return c
}

func (c *kvCache) pushFree(id int32) {
	b := &c.blocks[id]
	b.free, b.prev, b.next = true, c.tail, none
	if c.tail != none {
		c.blocks[c.tail].next = id
	} else {
		c.head = id
	}
	c.tail = id
	c.numFree++
}

func (c *kvCache) unlinkFree(id int32) {
	b := &c.blocks[id]
	if b.prev != none {
		c.blocks[b.prev].next = b.next
	} else {
		c.head = b.next
	}
	if b.next != none {
		c.blocks[b.next].prev = b.prev
	} else {
		c.tail = b.prev
	}
	b.free, b.prev, b.next = false, none, none
	c.numFree--
}

// lookup returns the blocks holding the longest cached prefix of hashes.
func (c *kvCache) lookup(hashes []uint64, dst []int32) []int32 {
	for _, h := range hashes {
		id, ok := c.cached.get(h)
		if !ok {
			break
		}
		dst = append(dst, id)
	}
	return dst
}

// freeAmong counts the blocks of ids that sit in the free queue: taking them
// shrinks what allocate can use.
func (c *kvCache) freeAmong(ids []int32) int {
	n := 0
	for _, id := range ids {
		if c.blocks[id].free {
			n++
		}
	}
	return n
}

// acquire takes a reference on cached blocks.
func (c *kvCache) acquire(ids []int32) {
	for _, id := range ids {
		if c.blocks[id].free {
			c.unlinkFree(id)
		}
		c.blocks[id].ref++
	}
}

// allocate appends n fresh blocks to dst; the caller has checked numFree.
func (c *kvCache) allocate(n int, dst []int32) []int32 {
	for ; n > 0; n-- {
		id := c.head
		c.unlinkFree(id)
		b := &c.blocks[id]
		if b.hashed {
			c.cached.remove(b.hash)
			b.hashed = false
			c.log.removed(b.hash, n)
		}
		b.ref = 1
		dst = append(dst, id)
	}
	return dst
}

// release drops a reference on each block, last block first, so that a
// sequence's tail is evicted before its (more shareable) head.
func (c *kvCache) release(ids []int32) {
	for i := len(ids) - 1; i >= 0; i-- {
		b := &c.blocks[ids[i]]
		if b.ref--; b.ref == 0 {
			c.pushFree(ids[i])
		}
	}
}

// commit records that block id now holds the full block hashed h. It reports
// false when another block already caches h (the duplicate stays private).
func (c *kvCache) commit(id int32, h uint64) bool {
	i, dup := c.cached.find(h)
	if dup {
		return false
	}
	c.blocks[id].hash, c.blocks[id].hashed = h, true
	c.cached.putAt(i, h, id)
	return true
}

// reset forgets every cached hash; blocks in use stay allocated.
func (c *kvCache) reset() {
	for i := range c.blocks {
		c.blocks[i].hashed = false
	}
	c.cached.reset()
}

// used is the number of blocks referenced by running requests.
func (c *kvCache) used() int { return len(c.blocks) - c.numFree }
