package etcd

import (
	"strings"
	"testing"
	"time"
)

// A rank whose lease is still live but that joined through the same
// handle as a rank whose lease expired is explained by that expiry: the
// leases of one dead process expire one by one. A rank of another handle
// in the same process is not.
func TestExplainNamesTheLeaseLostByTheSameHandle(t *testing.T) {
	now := time.Now()
	st := func(handle string) memberState { return memberState{PID: 7, Host: "vm", Handle: handle} }
	g := &group{view: map[int]*peer{
		2: {state: st("h1"), gone: true, goneAt: now.Add(-time.Second)},
		3: {state: st("h1"), seenAt: now},
		4: {state: st("h2"), seenAt: now},
		5: {state: st("h1"), gone: true, left: true, goneAt: now},
	}}
	got := g.explainLocked(3, 1, "generation", now).Reason
	for _, want := range []string{"lost the lease of rank 2", "lease expired at", "pid 7 on vm", "this rank's own lease has not expired yet"} {
		if !strings.Contains(got, want) {
			t.Errorf("rank 3: %q does not say %q", got, want)
		}
	}
	if got := g.explainLocked(4, 1, "generation", now).Reason; !strings.HasPrefix(got, "alive") {
		t.Errorf("rank 4, another handle: %q", got)
	}
	delete(g.view, 2) // only a rank that left: no loss to explain by
	if got := g.explainLocked(3, 1, "generation", now).Reason; !strings.HasPrefix(got, "alive") {
		t.Errorf("rank 3 beside a rank that left: %q", got)
	}
}
