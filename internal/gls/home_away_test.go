//go:build syncwatch_awayhome

package gls_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/internal/gls"
)

// Under syncwatch_awayhome no state sits in its home slot: Home and Mine
// miss, and the lookups that probe still find it.
func TestEveryStateIsAwayFromHome(t *testing.T) {
	const id = 1<<40 + 789
	g := gls.Get(id)
	defer func() { g.Rest(); gls.Release(id) }()
	if gls.Home(id) != nil || gls.Mine(id) != nil {
		t.Fatal("a state sits in its home slot")
	}
	if gls.Find(id) != g || gls.Get(id) != g {
		t.Fatal("the state away from home is not found")
	}
}
