package lockorder_test

import (
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// copyCond copies c as an assignment would, out of go vet's sight (vet
// reports the assignment itself: the point of Cond's noCopy).
func copyCond(c *lockorder.Cond) *lockorder.Cond {
	cp := new(lockorder.Cond)
	reflect.ValueOf(cp).Elem().Set(reflect.ValueOf(c).Elem())
	return cp
}

// A Cond copied after its first use panics on every use of the copy, as
// sync.Cond does ("sync.Cond is copied"), in every build; the original
// goes on working.
func TestCopiedCondPanics(t *testing.T) {
	var mu sync.Mutex
	c := lockorder.NewCond(&mu)
	c.Signal() // first use
	cp := copyCond(c)

	const msg = "lockorder: Cond is copied"
	assert.PanicsWithValue(t, msg, cp.Signal)
	assert.PanicsWithValue(t, msg, cp.Broadcast)
	mu.Lock()
	assert.PanicsWithValue(t, msg, cp.Wait, "before it unlocks L")
	assert.True(t, !mu.TryLock(), "L is still held")
	mu.Unlock()

	woken := make(chan struct{})
	mu.Lock()
	go func() {
		mu.Lock()
		c.Signal()
		mu.Unlock()
		close(woken)
	}()
	c.Wait() // the original works
	mu.Unlock()
	<-woken
}

// A Cond copied before its first use is a Cond of its own, as with sync.
func TestCondCopiedBeforeUseWorks(t *testing.T) {
	var mu sync.Mutex
	cp := copyCond(lockorder.NewCond(&mu))
	assert.NotPanics(t, cp.Signal)
	assert.NotPanics(t, cp.Broadcast)
}
