// Package viaharness takes two locks in either order.
package viaharness

import "sync"

var first, second sync.Mutex

// Forward locks first, then second.
func Forward() { first.Lock(); second.Lock(); second.Unlock(); first.Unlock() }

// Backward locks second, then first.
func Backward() { second.Lock(); first.Lock(); first.Unlock(); second.Unlock() }
