package kvindex

import "sort"

// EndpointStats describes one endpoint's share of the index.
type EndpointStats struct {
	Endpoint  string
	Blocks    int // entries held (observed + predicted)
	Observed  int // entries created or confirmed by engine events
	Predicted int // entries from RecordPredicted only
	Capacity  int // effective bound on Blocks
	Evictions uint64
	Expired   uint64
}

// Stats is a point-in-time summary; fields are summed over endpoints.
type Stats struct {
	Endpoints     []EndpointStats // sorted by Endpoint
	Entries       int             // (block, endpoint) pairs
	UniqueBlocks  int             // distinct blocks held by anyone
	Observed      int
	Predicted     int
	Evictions     uint64 // LRU evictions since New, removed endpoints included
	Expired       uint64 // TTL expiries since New, removed endpoints included
	UnknownParent uint64 // ApplyStored calls rejected with ErrUnknownParent
	Retracted     uint64 // predicted entries taken back by Retract (refused requests)
}

// Stats returns a summary. It locks each endpoint briefly in turn, so the
// totals are not one atomic snapshot under concurrent writes.
func (ix *Index) Stats() Stats {
	st := Stats{
		UniqueBlocks: ix.s.blocks(), UnknownParent: ix.unknownParent.Load(), Retracted: ix.retracted.Load(),
		Evictions: ix.retiredEvictions.Load(), Expired: ix.retiredExpired.Load(),
	}
	for _, ep := range ix.reg.all() {
		ep.mu.Lock()
		es := EndpointStats{
			Endpoint: ep.name, Blocks: ep.blocks.len(), Observed: ep.observed, Predicted: ep.predicted,
			Capacity: ix.limit(ep), Evictions: ep.evictions, Expired: ep.expired,
		}
		ep.mu.Unlock()
		st.Endpoints = append(st.Endpoints, es)
		st.Entries += es.Blocks
		st.Observed += es.Observed
		st.Predicted += es.Predicted
		st.Evictions += es.Evictions
		st.Expired += es.Expired
	}
	sort.Slice(st.Endpoints, func(i, j int) bool { return st.Endpoints[i].Endpoint < st.Endpoints[j].Endpoint })
	return st
}

// limit is the endpoint's effective capacity. Callers hold ep.mu.
func (ix *Index) limit(ep *endpoint) int {
	if ep.capacity > 0 && !ep.multiNS {
		return ep.capacity
	}
	// The capacity is the engine's GPU blocks; once the endpoint reports other
	// tiers or KV groups the view holds more than that (their removals keep it
	// true), so only the memory bound applies.
	return max(ep.capacity, ix.opts.MaxBlocksPerEndpoint)
}
