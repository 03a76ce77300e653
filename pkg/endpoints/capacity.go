package endpoints

// IndexEntries is how many prefix-index entries an endpoint of capacity c
// may hold: its KV blocks divided by the index stride (an entry stands for
// stride blocks), at least 1; 0 when the KV size is unknown, which leaves the
// index's default bound in force. It is the one owner of that number: the
// router's membership sync, the scrape feed and the simulator all call it.
func (c Capacity) IndexEntries(stride int) int {
	if c.TotalBlocks <= 0 {
		return 0
	}
	return max(c.TotalBlocks/max(stride, 1), 1)
}
