package workload

import (
	"fmt"
	"time"
)

// Brief is the product brief's scenario: 80 % of requests reuse one
// 6,000-token policy prefix (followed by a short question), 20 % carry
// unrelated 12,000-token documents, at Rate requests/s (Poisson). With
// ImportDocs > 0 a document-import burst of that many 12,000-token documents
// arrives within ImportWindow, starting at ImportAt.
type Brief struct {
	Rate         float64
	Requests     int
	QuestionLen  int // default 200
	Output       int // default 200
	ImportDocs   int
	ImportAt     time.Duration
	ImportWindow time.Duration
}

// Brief scenario constants, from the product brief.
const (
	BriefPrefixLen = 6000
	BriefDocLen    = 12000
	BriefShare     = 0.8
)

// Generate builds the scenario deterministically from seed.
func (b Brief) Generate(seed int64) (Workload, error) {
	if b.QuestionLen <= 0 {
		b.QuestionLen = 200
	}
	if b.Output <= 0 {
		b.Output = 200
	}
	steady, err := SharedPrefix{Requests: b.Requests, Prefixes: 1, PrefixLen: BriefPrefixLen, SuffixLen: b.QuestionLen,
		Share: BriefShare, UnsharedLen: BriefDocLen, Output: b.Output, Arrivals: Arrivals{Rate: b.Rate}}.Generate(seed)
	if err != nil {
		return Workload{}, fmt.Errorf("brief: %w", err)
	}
	for i := range steady {
		if steady[i].Class == "unshared" {
			steady[i].Class = "document"
		}
	}
	if b.ImportDocs <= 0 {
		return Merge("brief", steady), nil
	}
	burst, err := Burst{Documents: b.ImportDocs, DocLen: BriefDocLen, Output: b.Output,
		Start: b.ImportAt, Window: b.ImportWindow}.Generate(seed)
	if err != nil {
		return Workload{}, fmt.Errorf("brief: %w", err)
	}
	return Merge("brief-import", steady, burst), nil
}
