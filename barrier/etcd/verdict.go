package etcd

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/syncwatch/syncwatch/barrier"
)

// The states of a generation's key. A generation's key is created
// pending (version 1) by its first arrival, and written exactly once more
// (version 2), done or broken, by a transaction that compares its version
// with 1: whoever decides first decides for every rank, and every rank
// reads that one verdict.
const (
	statePending = "pending"
	stateDone    = "done"
	stateBroken  = "broken"
)

// verdict is the value of a generation's key.
type verdict struct {
	State    string `json:"state"`
	OpenedBy int    `json:"openedBy"`
	// The rest is set for a broken generation.
	Cause    string                 `json:"cause,omitempty"` // one of the cause constants
	Text     string                 `json:"text,omitempty"`  // the cause's text
	BrokenBy int                    `json:"brokenBy"`
	Missing  [][2]int               `json:"missing,omitempty"` // ranges of ranks, inclusive
	Why      []barrier.MissingRank  `json:"why,omitempty"`
	Waited   time.Duration          `json:"waited,omitempty"`
	Mismatch *barrier.MismatchError `json:"mismatch,omitempty"`
	At       time.Time              `json:"at"`
}

func (v *verdict) encode() string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("barrier/etcd: encode verdict: %v", err))
	}
	return string(b)
}

func decodeVerdict(b []byte) (*verdict, error) {
	v := new(verdict)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("barrier/etcd: bad generation value %q: %w", b, err)
	}
	return v, nil
}

// decided reports whether v is a verdict, not a pending generation.
func (v *verdict) decided() bool { return v.State == stateDone || v.State == stateBroken }

// toRanges writes increasing ranks as inclusive ranges.
func toRanges(ranks []int) [][2]int {
	var out [][2]int
	for _, r := range ranks {
		if n := len(out); n > 0 && out[n-1][1] == r-1 {
			out[n-1][1] = r
			continue
		}
		out = append(out, [2]int{r, r})
	}
	return out
}

func fromRanges(rs [][2]int) []int {
	var out []int
	for _, r := range rs {
		for x := r[0]; x <= r[1]; x++ {
			out = append(out, x)
		}
	}
	return out
}

// brokenError builds the *barrier.BrokenError of a broken generation, the
// same in every process: the ranks that arrived are those not missing.
func (v *verdict) brokenError(name string, gen uint64, parties int) *barrier.BrokenError {
	missing := fromRanges(v.Missing)
	arrived := make([]int, 0, parties-len(missing))
	for r := range parties {
		if _, found := slices.BinarySearch(missing, r); !found {
			arrived = append(arrived, r)
		}
	}
	return &barrier.BrokenError{
		Barrier:    name,
		Generation: gen,
		Parties:    parties,
		Arrived:    arrived,
		Missing:    missing,
		Why:        v.Why,
		Waited:     v.Waited,
		Cause:      causeError(v.Cause, v.Text, v.Mismatch),
		BrokenBy:   v.BrokenBy,
	}
}
