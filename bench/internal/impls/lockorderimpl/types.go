// Package lockorderimpl runs the benchmark workloads on lockorder.Mutex and
// lockorder.RWMutex, in whatever mode the caller configured (or compiled
// away, under the syncwatch_off build tag).
package lockorderimpl

import "github.com/syncwatch/syncwatch/lockorder"

// Mutex is the mutex the workloads use.
type Mutex = lockorder.Mutex

// RWMutex is the reader/writer mutex the workloads use.
type RWMutex = lockorder.RWMutex

// WaitGroup is the wait group the workloads use.
type WaitGroup = lockorder.WaitGroup
