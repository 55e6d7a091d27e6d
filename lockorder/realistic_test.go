//go:build !syncwatch_off

package lockorder_test

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// Code written for sync, with the types swapped: no false reports.

type account struct {
	mu      *lockorder.Mutex
	id      int
	balance int
}

// transfer locks both accounts in id order, the textbook way to avoid an
// inversion between two locks of one class.
func transfer(from, to *account, amount int) {
	first, second := from, to
	if second.id < first.id {
		first, second = second, first
	}
	first.mu.Lock()
	defer first.mu.Unlock()
	second.mu.Lock()
	defer second.mu.Unlock()
	from.balance -= amount
	to.balance += amount
}

type queue struct {
	mu    lockorder.Mutex
	cond  *sync.Cond
	items []int
	done  bool
}

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) put(v int) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *queue) get() (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.done {
		q.cond.Wait() // Unlock, wait, Lock: through lockorder's methods
	}
	if len(q.items) == 0 {
		return 0, false
	}
	v := q.items[0]
	q.items = q.items[1:]
	return v, true
}

type cache struct {
	mu lockorder.RWMutex
	m  map[int]int
}

func (c *cache) get(k int) (int, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *cache) set(k, v int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = v
}

func TestRealisticCodeHasNoFalseReports(t *testing.T) {
	fresh(t)
	defer lockordertest.VerifyNone(t)

	accounts := make([]*account, 16)
	for i := range accounts {
		accounts[i] = &account{mu: lockorder.NewMutex("account"), id: i, balance: 100}
	}
	c := &cache{m: map[int]int{}}
	q := newQueue()
	var wg sync.WaitGroup
	var consumed sync.WaitGroup
	total := 0
	var totalMu lockorder.Mutex
	for range 2 {
		consumed.Go(func() {
			for {
				v, ok := q.get()
				if !ok {
					return
				}
				totalMu.Lock()
				total += v
				totalMu.Unlock()
			}
		})
	}
	for w := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range 300 {
				a, b := r.IntN(len(accounts)), r.IntN(len(accounts))
				if a != b {
					transfer(accounts[a], accounts[b], 1)
				}
				if _, ok := c.get(a); !ok {
					c.set(a, b)
				}
				q.put(1)
			}
		})
	}
	wg.Wait()
	q.mu.Lock()
	q.done = true
	q.mu.Unlock()
	q.cond.Broadcast()
	consumed.Wait()

	sum := 0
	for _, a := range accounts {
		sum += a.balance
	}
	assert.Equal(t, 1600, sum)
	assert.Equal(t, 8*300, total)
	assert.Empty(t, lockorder.Violations())
}
