package barrier

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Collective fingerprints: an Await may name the collective operation it
// is part of (Op("model.all_sum")). Ranks of one generation that arrive
// for different operations are out of step (the RDMA incident: one rank in
// the model's all-reduce, the other in the control bus's), and would wait
// for each other forever in the real collective: the generation breaks at
// once with a *MismatchError that names who is at which operation and
// each rank's count of collectives so far.

// KindCollectiveMismatch: ranks of one generation arrived for different
// operations (see [Op]). The generation broke at once.
const KindCollectiveMismatch lockorder.Kind = "collective-mismatch"

// ErrCollectiveMismatch matches every *[MismatchError], and so every
// *[BrokenError] whose generation broke on one.
var ErrCollectiveMismatch = errors.New("barrier: collective mismatch")

// An AwaitOption configures one Await; see [Op].
type AwaitOption interface {
	applyAwait(*awaitConfig)
}

type awaitConfig struct {
	op string
}

type opOption string

func (o opOption) applyAwait(c *awaitConfig) { c.op = string(o) }

// Op labels an Await with the collective operation it is part of, such
// as "model.all_sum". Every rank of a generation that gives a label must
// give the same one; the first arrival with a label sets it. An arrival
// with another label breaks the generation at once with a *[MismatchError]
// as its Cause, reported as a [KindCollectiveMismatch] violation. Arrivals
// without a label are not checked. The barrier counts each rank's
// labelled Awaits, per label, for the error.
func Op(label string) AwaitOption { return opOption(label) }

// OpOf returns the label that opts set with [Op], "" if none (the last
// one wins). It is for barriers built outside this package, such as
// barrier/etcd, that take the same options.
func OpOf(opts ...AwaitOption) string {
	var c awaitConfig
	for _, o := range opts {
		if o != nil {
			o.applyAwait(&c)
		}
	}
	return c.op
}

// MaxOpLabels bounds the labels a rank's counts keep apart; the
// collectives of further labels are counted under [OtherOps].
const MaxOpLabels = 64

// OtherOps is the label under which a rank's collectives are counted once
// it has used [MaxOpLabels] labels.
const OtherOps = "(other)"

// OpCount is a rank's count of collectives of one label.
type OpCount struct {
	Op    string
	Count uint64
}

// OpCounts counts a rank's collectives per label, at most [MaxOpLabels]
// labels. The zero OpCounts is empty and ready to use; it is not safe for
// concurrent use.
type OpCounts struct {
	counts []OpCount
}

// Add counts one collective of label and returns the new count.
func (c *OpCounts) Add(label string) uint64 {
	i := slices.IndexFunc(c.counts, func(x OpCount) bool { return x.Op == label })
	if i < 0 && len(c.counts) >= MaxOpLabels {
		label = OtherOps
		i = slices.IndexFunc(c.counts, func(x OpCount) bool { return x.Op == label })
	}
	if i < 0 {
		c.counts = append(c.counts, OpCount{Op: label})
		i = len(c.counts) - 1
	}
	c.counts[i].Count++
	return c.counts[i].Count
}

// Clone returns a copy of c.
func (c *OpCounts) Clone() OpCounts { return OpCounts{counts: slices.Clone(c.counts)} }

// Snapshot returns the counts, sorted by label.
func (c *OpCounts) Snapshot() []OpCount {
	out := slices.Clone(c.counts)
	slices.SortFunc(out, func(a, b OpCount) int { return strings.Compare(a.Op, b.Op) })
	return out
}

// OpRanks lists the ranks that arrived for one operation.
type OpRanks struct {
	Op    string
	Ranks []int
}

// RankOps is one rank's arrival in a mismatched generation: the operation
// it arrived for and its count of collectives so far, per label, this one
// included.
type RankOps struct {
	Rank   int
	Op     string
	Counts []OpCount
}

// MismatchError is the Cause of a generation broken because its ranks
// arrived for different operations (see [Op]). errors.Is matches it, and
// the *[BrokenError] that carries it, against [ErrCollectiveMismatch].
type MismatchError struct {
	// Barrier is the barrier's name and Generation the generation.
	Barrier    string
	Generation uint64
	// Ops says which ranks are at which operation, in the order the
	// operations were first seen. Ranks that gave no label are left out.
	Ops []OpRanks
	// Ranks gives, for every rank of Ops in arrival order, its operation
	// and its counts of collectives so far.
	Ranks []RankOps
}

// Error names the operations and the ranks at each, then the counts of
// at most [MaxExplained] ranks.
func (e *MismatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "barrier: collective mismatch: %s generation %d: ", e.Barrier, e.Generation)
	for i, o := range e.Ops {
		if i > 0 {
			b.WriteString(", ")
		}
		ranks := slices.Sorted(slices.Values(o.Ranks))
		fmt.Fprintf(&b, "%s at %s", rankLabel(ranks), o.Op)
	}
	b.WriteString("; collectives so far: ")
	for i, r := range e.Ranks {
		if i == MaxExplained {
			fmt.Fprintf(&b, "; ... and %d more ranks", len(e.Ranks)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString("rank " + strconv.Itoa(r.Rank) + " ")
		b.WriteString(FormatOpCounts(r.Counts))
	}
	return b.String()
}

// FormatOpCounts writes counts as "{bus.all_sum: 7, model.all_sum: 8}".
func FormatOpCounts(counts []OpCount) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range counts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Op + ": " + strconv.FormatUint(c.Count, 10))
	}
	b.WriteByte('}')
	return b.String()
}

// Is reports whether target is ErrCollectiveMismatch.
func (e *MismatchError) Is(target error) bool { return target == ErrCollectiveMismatch }

// ErrorType returns "collective-mismatch".
func (e *MismatchError) ErrorType() string { return string(KindCollectiveMismatch) }

// NewMismatchError groups arrivals, in arrival order, into a
// *MismatchError: labelled arrivals only.
func NewMismatchError(barrier string, generation uint64, arrivals []RankOps) *MismatchError {
	e := &MismatchError{Barrier: barrier, Generation: generation}
	for _, a := range arrivals {
		if a.Op == "" {
			continue
		}
		e.Ranks = append(e.Ranks, a)
		i := slices.IndexFunc(e.Ops, func(o OpRanks) bool { return o.Op == a.Op })
		if i < 0 {
			e.Ops = append(e.Ops, OpRanks{Op: a.Op})
			i = len(e.Ops) - 1
		}
		e.Ops[i].Ranks = append(e.Ops[i].Ranks, a.Rank)
	}
	return e
}

// checkOpLocked counts rank's labelled arrival for g and returns a
// *MismatchError if its label differs from the generation's. Called with
// b.mu held, after the arrival was recorded.
func (b *Barrier) checkOpLocked(g *generation, st *rankState, op string) *MismatchError {
	if op == "" {
		return nil
	}
	if st.ops == nil {
		st.ops = new(OpCounts)
	}
	st.ops.Add(op)
	if g.op == "" {
		g.op = op
		return nil
	}
	if g.op == op {
		return nil
	}
	arrivals := make([]RankOps, 0, len(g.arrivals))
	for _, a := range g.arrivals {
		if a.Op == "" {
			continue
		}
		var counts []OpCount
		if s := b.ranks.get(a.Rank); s.ops != nil {
			counts = s.ops.Snapshot()
		}
		arrivals = append(arrivals, RankOps{Rank: a.Rank, Op: a.Op, Counts: counts})
	}
	return NewMismatchError(b.cfg.name, g.num, arrivals)
}

// kind is the violation kind of a break: a collective mismatch, or a
// plain break.
func (e *BrokenError) kind() lockorder.Kind {
	if errors.Is(e.Cause, ErrCollectiveMismatch) {
		return KindCollectiveMismatch
	}
	return KindBroken
}
