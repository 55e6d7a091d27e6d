package embedlinedirective

import "sync"

var global sync.Mutex

func A() {
	var p Parser
	lockIt(&p.mu)
	Guard(&global)
}

func lockIt(m *sync.Mutex) { m.Lock(); m.Unlock() }
