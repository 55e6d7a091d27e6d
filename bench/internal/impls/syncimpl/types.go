// Package syncimpl runs the benchmark workloads on sync.Mutex and
// sync.RWMutex, the baseline every other implementation is compared with.
package syncimpl

import "sync"

// Mutex is the mutex the workloads use.
type Mutex = sync.Mutex

// RWMutex is the reader/writer mutex the workloads use.
type RWMutex = sync.RWMutex

// WaitGroup is the wait group the workloads use.
type WaitGroup = sync.WaitGroup
