// Package deadlockimpl runs the benchmark workloads on
// github.com/sasha-s/go-deadlock's Mutex and RWMutex, with whatever
// deadlock.Opts the caller set.
package deadlockimpl

import (
	"sync"

	deadlock "github.com/sasha-s/go-deadlock"
)

// Mutex is the mutex the workloads use.
type Mutex = deadlock.Mutex

// RWMutex is the reader/writer mutex the workloads use.
type RWMutex = deadlock.RWMutex

// WaitGroup is the wait group the workloads use: go-deadlock has none, so
// sync's, as its users have.
type WaitGroup = sync.WaitGroup
