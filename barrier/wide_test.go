package barrier_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
)

// seq returns from..to, inclusive.
func seq(from, to int) []int {
	out := make([]int, 0, to-from+1)
	for r := from; r <= to; r++ {
		out = append(out, r)
	}
	return out
}

// A wide barrier that one rank reached breaks with an error whose text is
// bounded and gives the missing ranks as a range, while the error's
// fields list every one of them.
func TestWideBarrierBreaksWithBoundedError(t *testing.T) {
	resetViolations(t)
	const parties, bound = 100_000, 50 * time.Millisecond
	b := barrier.New(parties, barrier.WithName("wide"), barrier.WithTimeout(bound))

	start := time.Now()
	_, err := b.Await(context.Background(), 0)
	t.Logf("Await returned %v after its deadline", time.Since(start)-bound)

	var be *barrier.BrokenError
	require.ErrorAs(t, err, &be)
	assert.ErrorIs(t, be, context.DeadlineExceeded)
	assert.Equal(t, seq(1, parties-1), be.Missing, "the typed error lists every missing rank")
	assert.Equal(t, []int{0}, be.Arrived)
	assert.Equal(t, parties-1, be.NeverArrived)
	require.Len(t, be.Why, barrier.MaxExplained)
	for i, m := range be.Why {
		assert.Equal(t, barrier.MissingRank{Rank: i + 1, HolderRank: -1, Reason: "never arrived at this barrier"}, m)
	}

	text := be.Error()
	t.Logf("Error() is %d bytes: %s", len(text), text)
	assert.LessOrEqual(t, len(text), barrier.MaxErrorText)
	assert.Contains(t, text, "wide generation 0 after")
	assert.Contains(t, text, "1/100000 arrived, missing [1-99999] (99999 ranks)")
	assert.Contains(t, text, "; ranks 1-32 and 99967 more: never arrived at this barrier")

	report := be.Report()
	assert.Less(t, len(report), 8*barrier.MaxErrorText, "the report is bounded too")
	assert.Contains(t, report, "  99967 more ranks: never arrived at this barrier\n")
	assert.Contains(t, report, "generation 0: broken after")
	assert.Contains(t, report, "missing [1-99999] (99999 ranks)")

	if reporting() {
		vs := violations(barrier.KindBroken)
		require.Len(t, vs, 1)
		assert.Less(t, len(vs[0].Message)+len(vs[0].Detail), 8*barrier.MaxErrorText)
		slow := violations(barrier.KindSlow)
		require.Len(t, slow, 1)
		assert.Contains(t, slow[0].Message, "1/100000 arrived, missing [1-99999] (99999 ranks) after")
		assert.Less(t, len(slow[0].Message)+len(slow[0].Detail), 8*barrier.MaxErrorText)
	}
}

// When more ranks are missing than are explained, the ranks whose
// goroutine is known (they called Await before, so they are stuck
// somewhere) are explained first, and the text counts the others.
func TestWideBreakExplainsKnownRanksFirst(t *testing.T) {
	const parties = 1000
	b := barrier.New(parties, barrier.WithTimeout(100*time.Millisecond))

	// Ranks 900..999 arrive for generation 0, which is aborted: the
	// barrier learns their goroutines, which then return.
	var wg sync.WaitGroup
	for r := 900; r < parties; r++ {
		wg.Go(func() {
			_, err := b.Await(context.Background(), r)
			assert.ErrorIs(t, err, barrier.ErrAborted)
		})
	}
	require.Eventually(t, func() bool { _, arrived := b.Current(); return len(arrived) == 100 },
		10*time.Second, time.Millisecond)
	b.Abort(nil)
	waitGroup(t, &wg, 10*time.Second)

	// Rank 0 collects generation 0's error, then waits alone for 1.
	_, err := b.Await(context.Background(), 0)
	require.ErrorIs(t, err, barrier.ErrAborted)
	gen, err := b.Await(context.Background(), 0)
	require.EqualValues(t, 1, gen)
	var be *barrier.BrokenError
	require.ErrorAs(t, err, &be)

	assert.Equal(t, seq(1, parties-1), be.Missing)
	assert.Equal(t, 899, be.NeverArrived)
	require.Len(t, be.Why, barrier.MaxExplained)
	for i, m := range be.Why {
		assert.Equal(t, 900+i, m.Rank, "the ranks with a goroutine come first, in order")
		assert.NotZero(t, m.Goroutine)
		assert.Equal(t, "not waiting in syncwatch (running, or blocked elsewhere)", m.Reason)
	}
	text := be.Error()
	assert.LessOrEqual(t, len(text), barrier.MaxErrorText)
	assert.Contains(t, text, "1/1000 arrived, missing [1-999] (999 ranks)")
	assert.Contains(t, text, "; ranks 900-931: not waiting in syncwatch (running, or blocked elsewhere)")
	assert.Contains(t, text, "; 899 more ranks: never arrived at this barrier")
	assert.Contains(t, text, "; 68 more ranks: not explained (at most 32 are)")
}

// Departed ranks of a wide barrier are told apart from missing ones, and
// listed as ranges too. A rank that left after arriving counts as arrived.
func TestWideBreakWithDepartedRanks(t *testing.T) {
	const parties = 5000
	b := barrier.New(parties, barrier.WithTimeout(200*time.Millisecond))
	for r := 2000; r < 2100; r++ {
		b.Leave(r, nil)
	}
	b.Leave(4999, nil)
	var (
		wg   sync.WaitGroup
		err1 error
	)
	wg.Go(func() { _, err1 = b.Await(context.Background(), 1) })
	require.Eventually(t, func() bool { _, arrived := b.Current(); return len(arrived) == 1 },
		10*time.Second, time.Millisecond)
	b.Leave(1, nil)
	_, err := b.Await(context.Background(), 0)
	waitGroup(t, &wg, 10*time.Second)
	var be *barrier.BrokenError
	require.ErrorAs(t, err, &be)
	assert.Same(t, be, err1)
	assert.Equal(t, []int{1, 0}, be.Arrived)
	assert.Equal(t, append(seq(2000, 2099), 4999), be.Left)
	assert.Equal(t, append(seq(2, 1999), seq(2100, 4998)...), be.Missing)
	assert.Equal(t, len(be.Missing), be.NeverArrived)
	assert.Contains(t, be.Error(), "2/5000 arrived, missing [2-1999, 2100-4998] (4897 ranks), left [2000-2099, 4999] (101 ranks)")
}

// Lists of ranks are given as ranges, cut short with the number left out,
// and the explanations that do not fit the bounded text are counted.
func TestBrokenErrorTextIsBounded(t *testing.T) {
	t.Run("ranges", func(t *testing.T) {
		e := &barrier.BrokenError{Barrier: "b", Parties: 13, Missing: []int{1, 2, 3, 4, 5, 7, 9, 10, 11, 12}}
		assert.Contains(t, e.Error(), "missing [1-5, 7, 9-12] (10 ranks)")
		e = &barrier.BrokenError{Barrier: "b", Parties: 3, Missing: []int{0, 2}}
		assert.Contains(t, e.Error(), "missing [0, 2]; 2 ranks: not explained")
	})
	t.Run("long list", func(t *testing.T) {
		var even []int
		for r := 0; r < 100_000; r += 2 {
			even = append(even, r)
		}
		e := &barrier.BrokenError{Barrier: "b", Parties: 100_000, Missing: even, NeverArrived: len(even)}
		text := e.Error()
		assert.LessOrEqual(t, len(text), barrier.MaxErrorText)
		assert.Contains(t, text, "missing [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, "+
			"32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62, ... and 49968 more] (50000 ranks)")
		assert.Contains(t, text, "; 50000 ranks: never arrived at this barrier")
	})
	t.Run("many explanations", func(t *testing.T) {
		e := &barrier.BrokenError{Barrier: "b", Parties: 1000, Cause: errors.New("timed out")}
		for r := range 1000 {
			e.Missing = append(e.Missing, r)
			e.Why = append(e.Why, barrier.MissingRank{Rank: r, Goroutine: int64(r + 1), HolderRank: -1,
				Reason: fmt.Sprintf("waiting for lock L%d, held by goroutine %d", r, 5000+r)})
		}
		text := e.Error()
		assert.LessOrEqual(t, len(text), barrier.MaxErrorText)
		assert.Contains(t, text, ": timed out; rank 0: waiting for lock L0, held by goroutine 5000; rank 1: ")
		assert.Regexp(t, `; \.\.\. \d+ explanations left out \(see BrokenError\.Why\)$`, text)
		var left int
		_, err := fmt.Sscanf(text[strings.LastIndex(text, "; ... ")+len("; ... "):], "%d", &left)
		require.NoError(t, err)
		assert.Equal(t, 1000, strings.Count(text, "; rank ")+left, "each explanation is written or counted")
	})
	t.Run("long cause", func(t *testing.T) {
		e := &barrier.BrokenError{Barrier: "b", Parties: 2, Missing: []int{1}, Cause: errors.New(strings.Repeat("é", 10_000))}
		text := e.Error()
		assert.LessOrEqual(t, len(text), barrier.MaxErrorText)
		assert.True(t, strings.HasSuffix(text, " [...]; ... 1 explanation left out (see BrokenError.Why)"), text[len(text)-80:])
		assert.True(t, utf8Valid(text))
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// New allocates next to nothing for a wide barrier: its memory grows with
// the ranks that arrive.
func TestNewMemoryDoesNotGrowWithParties(t *testing.T) {
	const parties = 1 << 22
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b := barrier.New(parties)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("New(%d) allocated %d bytes", parties, allocated)
	assert.Less(t, allocated, uint64(1<<20))
	runtime.KeepAlive(b)
}

// The spans of a wide break list at most MaxAttrRanks ranks, with the
// full numbers beside them.
func TestWideBreakSpanAttributesAreBounded(t *testing.T) {
	requireReporting(t)
	resetViolations(t)
	pipeline := tracetest.NewSpanRecorder()
	lockorder.Configure(lockorder.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(pipeline))))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithTracerProvider(otel.GetTracerProvider())) })

	const parties = 100_000
	b := barrier.New(parties, barrier.WithName("wide-span"), barrier.WithTimeout(50*time.Millisecond))
	_, err := b.Await(context.Background(), 0)
	require.ErrorIs(t, err, barrier.ErrBroken)

	broken := spansNamed(pipeline.Ended(), string(barrier.KindBroken))
	require.Len(t, broken, 1)
	a := attrsOf(broken[0].Attributes())
	assert.Equal(t, seq(1, barrier.MaxAttrRanks), toInts(a["syncwatch.barrier.missing"].AsInt64Slice()))
	assert.EqualValues(t, parties-1, a["syncwatch.barrier.missing_count"].AsInt64())
	assert.Equal(t, []int64{0}, a["syncwatch.barrier.arrived"].AsInt64Slice())
	assert.EqualValues(t, 1, a["syncwatch.barrier.arrived_count"].AsInt64())
}

func toInts(s []int64) []int {
	out := make([]int, len(s))
	for i, v := range s {
		out[i] = int(v)
	}
	return out
}
