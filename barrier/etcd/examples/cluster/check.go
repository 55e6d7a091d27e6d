package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/barrier"
)

// The checks of the three cases: each prints what the ranks got and
// reports whether the case was caught as expected.

// sameVerdict reports whether every rank in want reported the same
// error, and returns it (the lowest rank's result).
func sameVerdict(res map[int]result, want []int) (result, bool) {
	var first result
	for i, r := range want {
		got, ok := res[r]
		if !ok {
			fmt.Printf("    rank %d reported nothing\n", r)
			return first, false
		}
		if i == 0 {
			first = got
			continue
		}
		if got.Err != first.Err {
			fmt.Printf("    rank %d got another verdict: %s\n", r, short(got.Err, 200))
			return first, false
		}
	}
	if first.Err == "" {
		fmt.Println("    the generation completed: nothing was caught")
		return first, false
	}
	return first, true
}

func ranks(except ...int) []int {
	var out []int
	for r := range parties {
		if !slices.Contains(except, r) {
			out = append(out, r)
		}
	}
	return out
}

func whyOf(res result, rank int) (barrier.MissingRank, bool) {
	for _, m := range res.Why {
		if m.Rank == rank {
			return m, true
		}
	}
	return barrier.MissingRank{}, false
}

func pids(res map[int]result, rs ...int) string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("rank %d: pid %d", r, res[r].PID))
	}
	return strings.Join(out, ", ")
}

// headline is the first line of a break's report: "barrier NAME
// generation G after D: A/P arrived, missing [...]".
func headline(v result) string {
	line, _, _ := strings.Cut(v.Report, "\n")
	return line
}

func verdictLine(ok bool) string {
	if ok {
		return "CAUGHT"
	}
	return "NOT CAUGHT"
}

// checkLock: every rank got one verdict, missing rank 6, explained from
// rank 6's process as blocked on aggregation_lock held by rank 7, which
// waits at the barrier.
func checkLock(res map[int]result) bool {
	fmt.Printf("(a) rank %d blocks on aggregation_lock, held by rank %d (same process), which waits at the barrier\n", lockWaiter, lockHolder)
	v, ok := sameVerdict(res, ranks())
	if ok {
		m, found := whyOf(v, lockWaiter)
		ok = slices.Equal(v.Missing, []int{lockWaiter}) && found && m.HolderRank == lockHolder &&
			strings.Contains(m.WaitingFor, "aggregation_lock") &&
			strings.Contains(m.Reason, fmt.Sprintf("which is waiting for barrier allreduce (rank %d", lockHolder))
		fmt.Printf("    all %d ranks in %d processes got one verdict: %s\n", parties, procs, headline(v))
		fmt.Printf("    rank %d, as its own process (pid %d) told the others (rank 0: pid %d):\n      %s\n",
			lockWaiter, res[lockWaiter].PID, res[0].PID, m.Reason)
	}
	fmt.Printf("    => %s\n\n", verdictLine(ok))
	return ok
}

// checkKill: the 14 surviving ranks got one verdict within the bound,
// naming ranks 10 and 11 and their expired leases.
func checkKill(res map[int]result, killedAt time.Time) bool {
	dead := []int{2 * victimProc, 2*victimProc + 1}
	bound := cases[2].timeout
	fmt.Printf("(b) process %d (ranks %d, %d) hangs in generation 1 and is killed with SIGKILL\n", victimProc, dead[0], dead[1])
	v, ok := sameVerdict(res, ranks(dead...))
	if ok && !killedAt.IsZero() {
		var latest time.Time
		for _, r := range ranks(dead...) {
			if at := res[r].At; at.After(latest) {
				latest = at
			}
		}
		after := latest.Sub(killedAt)
		m, found := whyOf(v, dead[0])
		ok = v.Lease && found && strings.Contains(m.Reason, "lease expired at") &&
			slices.Contains(v.Missing, dead[0]) && slices.Contains(v.Missing, dead[1]) && after < bound
		fmt.Printf("    the %d other ranks got one verdict, the last %v after the kill (bound %v, lease TTL %v):\n      %s\n",
			len(ranks(dead...)), after.Round(10*time.Millisecond), bound, leaseTTL, headline(v))
		for _, m := range v.Why {
			fmt.Printf("      rank %d: %s\n", m.Rank, m.Reason)
		}
	}
	fmt.Printf("    => %s\n\n", verdictLine(ok))
	return ok
}

// checkCollective: every rank got one collective-mismatch verdict at
// once, naming who is at which operation, with counts.
func checkCollective(res map[int]result) bool {
	fmt.Printf("(c) rank %d calls bus.all_sum while the others call model.all_sum (their third collective)\n", busRank)
	v, ok := sameVerdict(res, ranks())
	if ok {
		ok = v.Mismatch && v.Ops != nil && strings.Contains(v.Err, fmt.Sprintf("rank %d at bus.all_sum", busRank)) &&
			strings.Contains(v.Err, fmt.Sprintf("rank %d {bus.all_sum: 1, model.all_sum: 2}", busRank))
		fmt.Printf("    all %d ranks got collective-mismatch at once (%s): %s\n", parties, pids(res, 0, busRank), headline(v))
		if v.Ops != nil {
			for _, o := range v.Ops.Ops {
				slices.Sort(o.Ranks)
				fmt.Printf("      at %-13s ranks %v\n", o.Op, o.Ranks)
			}
			for _, r := range v.Ops.Ranks {
				if r.Rank == busRank || r.Rank == 0 {
					fmt.Printf("      rank %d's collectives so far: %s\n", r.Rank, barrier.FormatOpCounts(r.Counts))
				}
			}
		}
	}
	fmt.Printf("    => %s\n", verdictLine(ok))
	return ok
}
