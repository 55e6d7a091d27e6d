//go:build sizesync

package main

import "sync"

// Mutex, RWMutex and WaitGroup are sync's.
type (
	Mutex     = sync.Mutex
	RWMutex   = sync.RWMutex
	WaitGroup = sync.WaitGroup
)
