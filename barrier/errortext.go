package barrier

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The bounds of the texts that describe a break, so that a barrier of
// any width breaks on time with a readable message; the BrokenError's
// fields keep every rank.
const (
	// maxErrorText bounds the length of BrokenError.Error's text.
	maxErrorText = 4 << 10
	// maxListed bounds the items (ranks or ranges) a list of ranks shows.
	maxListed = 32
	// omissionRoom is kept at the end of a bounded text for saying what
	// was left out.
	omissionRoom = 80
)

// rankList formats increasing ranks as "[1-5, 7, 9-12]", runs as ranges,
// with at most maxListed items. When that is not every rank one by one,
// it adds their number: "[1-99999] (99999 ranks)", "[0, 2, 4, ... and 49968
// more] (50000 ranks)".
func rankList(ranks []int) string {
	s, items := ranges(ranks)
	if items == len(ranks) {
		return "[" + s + "]"
	}
	return "[" + s + "] (" + plural(len(ranks), "rank") + ")"
}

// rankLabel is "rank 17" or "ranks 1-5, 9", for increasing ranks.
func rankLabel(ranks []int) string {
	s, _ := ranges(ranks)
	if len(ranks) == 1 {
		return "rank " + s
	}
	return "ranks " + s
}

// ranges writes increasing ranks as "1-5, 7, 9-12", at most maxListed
// items, then "... and N more". It returns the text and its number of
// items. Its work grows with the items written, not with the ranks.
func ranges(ranks []int) (string, int) {
	var b strings.Builder
	items := 0
	for i := 0; i < len(ranks); {
		j := runEnd(ranks, i)
		if items == maxListed {
			fmt.Fprintf(&b, ", ... and %d more", len(ranks)-i)
			break
		}
		if items > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(ranks[i]))
		if j-i > 1 {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(ranks[j-1]))
		}
		items++
		i = j
	}
	return b.String(), items
}

// runEnd returns the end of the run of consecutive ranks that starts at
// i. As ranks increase strictly, ranks[j]-ranks[i] == j-i holds exactly
// for the j of that run, so a binary search finds its end.
func runEnd(ranks []int, i int) int {
	return sort.Search(len(ranks)-i, func(k int) bool { return ranks[i+k]-ranks[i] != k }) + i
}

// plural is "1 rank" or "N ranks".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// whyClauses gives Why grouped by reason, in order of first appearance
// ("rank 17: REASON", "ranks 1-5, 9: REASON"), then the missing ranks Why
// leaves out.
func (e *BrokenError) whyClauses() []string {
	never, other := e.unexplained()
	var reasons []string
	byReason := make(map[string][]int)
	for _, m := range e.Why {
		if _, ok := byReason[m.Reason]; !ok {
			reasons = append(reasons, m.Reason)
		}
		byReason[m.Reason] = append(byReason[m.Reason], m.Rank)
	}
	out := make([]string, 0, len(reasons)+2)
	for _, reason := range reasons {
		label := rankLabel(byReason[reason])
		if strings.HasPrefix(reason, reasonNeverArrived) && never > 0 {
			label += " and " + strconv.Itoa(never) + " more"
			never = 0
		}
		out = append(out, label+": "+reason)
	}
	return append(out, unexplainedClauses(len(e.Why) > 0, never, other)...)
}

// unexplained counts the ranks of Missing that Why leaves out: those that
// never arrived, and the others.
func (e *BrokenError) unexplained() (never, other int) {
	return unexplained(len(e.Missing), e.Why, e.NeverArrived)
}

// unexplained counts the missing ranks that why leaves out, of missing
// ranks of which neverArrived never called Await: those that never
// arrived, and the others.
func unexplained(missing int, why []MissingRank, neverArrived int) (never, other int) {
	inWhy := 0
	for _, m := range why {
		if m.Goroutine == 0 && strings.HasPrefix(m.Reason, reasonNeverArrived) {
			inWhy++
		}
	}
	never = max(0, neverArrived-inWhy)
	other = max(0, missing-len(why)-never)
	return never, other
}

// unexplainedClauses describes the missing ranks Why leaves out, "more"
// of them if Why explains some.
func unexplainedClauses(more bool, never, other int) []string {
	noun := "rank"
	if more {
		noun = "more rank"
	}
	var out []string
	if never > 0 {
		out = append(out, plural(never, noun)+": "+reasonNeverArrived)
	}
	if other > 0 {
		out = append(out, fmt.Sprintf("%s: not explained (at most %d are)", plural(other, noun), MaxExplained))
	}
	return out
}

// boundedText builds a text of at most max bytes: a head, cut short if it
// must be, then whole clauses while they fit; the clauses that do not are
// counted and the count ends the text.
type boundedText struct {
	b       strings.Builder
	max     int
	dropped int
}

// head writes s, cut short to leave omissionRoom.
func (t *boundedText) head(s string) {
	room := t.max - omissionRoom - t.b.Len()
	if len(s) <= room {
		t.b.WriteString(s)
		return
	}
	const cut = " [...]"
	n := max(0, room-len(cut))
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	t.b.WriteString(s[:n])
	t.b.WriteString(cut)
}

// clause writes s if it, and every clause before it, fits.
func (t *boundedText) clause(s string) {
	if t.dropped > 0 || t.b.Len()+len(s) > t.max-omissionRoom {
		t.dropped++
		return
	}
	t.b.WriteString(s)
}

// String returns the text, saying how many clauses were left out.
func (t *boundedText) String() string {
	if t.dropped > 0 {
		fmt.Fprintf(&t.b, "; ... %s left out (see BrokenError.Why)", plural(t.dropped, "explanation"))
	}
	return t.b.String()
}
