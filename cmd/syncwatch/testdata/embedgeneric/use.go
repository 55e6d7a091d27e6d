package embedgeneric

import "sync"

func count(m map[string]*sync.Mutex) int { return len(m) }

func A() {
	m := map[string]*sync.Mutex{"a": new(sync.Mutex)}
	LockAll(m)
}

func B() int {
	b := NewBox[string]()
	return count(b.locks)
}
