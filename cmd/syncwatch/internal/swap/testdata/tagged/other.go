//go:build never

package tagged

import "sync"

var mu sync.Mutex

func lock() { mu.Lock() }
