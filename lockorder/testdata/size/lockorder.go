//go:build !sizesync

package main

import "github.com/syncwatch/syncwatch/lockorder"

// Mutex, RWMutex and WaitGroup are lockorder's.
type (
	Mutex     = lockorder.Mutex
	RWMutex   = lockorder.RWMutex
	WaitGroup = lockorder.WaitGroup
)
