package embedonlytest

import "sync"

var a, b sync.Mutex

func AB() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() }
func BA() { b.Lock(); a.Lock(); a.Unlock(); b.Unlock() }
