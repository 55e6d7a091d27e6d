package app

import (
	"sync"

	"example.com/methodexprforeign/lib"
)

// A method expression handed to code that is not rewritten stays sync,
// and so does the lock handed with it.
var handed sync.Mutex

func Hand() {
	lib.Apply((*sync.Mutex).Lock, &handed)
	handed.Unlock()
}

// A lock that meets code not rewritten stays sync, and so does a method
// expression called on it.
var touched sync.Mutex

func TouchThenLock() {
	lib.Touch(&touched)
	(*sync.Mutex).Lock(&touched)
	touched.Unlock()
}

// A lock that meets neither is swapped, with its method expression.
var own sync.Mutex

func Own() {
	(*sync.Mutex).Lock(&own)
	own.Unlock()
}
