//go:build !syncwatch_off

package lockorder

import (
	"maps"

	"github.com/syncwatch/syncwatch/internal/graph"
)

// byClass indexes the graph nodes of each class, by class id: the class's
// own node and the instance nodes of its locks. A class's writers' gate
// goes to each of them, and the cycles through them are searched again
// when it changes (setWritersGate, recheckInto): with the index, that
// costs what the class has, never a walk of every node of the graph, which
// made a first write under another lock cost as much as every lock ever
// seen (a storage engine's thousands of striped locks per object).
// Guarded by eng.mu.
type byClass struct {
	m    map[uint64]classNodes
	peak int // most classes since m was last rebuilt
}

// classNodes are one class's graph nodes. A zero-value lock's class has
// its own node only, so instances stays nil: one map entry per lock.
type classNodes struct {
	own       bool
	instances map[graph.NodeID]struct{}
}

// add indexes node id of the class classID.
func (x *byClass) add(classID uint64, id graph.NodeID) {
	if x.m == nil {
		x.m = make(map[uint64]classNodes)
	}
	cn := x.m[classID]
	if uint64(id) == classID {
		cn.own = true
	} else {
		if cn.instances == nil {
			cn.instances = make(map[graph.NodeID]struct{})
		}
		cn.instances[id] = struct{}{}
	}
	x.m[classID] = cn
	x.peak = max(x.peak, len(x.m))
}

// remove drops node id of the class classID from the index.
func (x *byClass) remove(classID uint64, id graph.NodeID) {
	cn, ok := x.m[classID]
	if !ok {
		return
	}
	if uint64(id) == classID {
		cn.own = false
	} else {
		delete(cn.instances, id)
	}
	if !cn.own && len(cn.instances) == 0 {
		delete(x.m, classID)
	} else {
		x.m[classID] = cn
	}
	// Go maps keep their peak size: rebuild once most classes are gone.
	if x.peak >= 4096 && len(x.m) <= x.peak/4 {
		x.m, x.peak = maps.Clone(x.m), len(x.m)
	}
}

// each calls f with each graph node of the class classID.
func (x *byClass) each(classID uint64, f func(graph.NodeID)) {
	cn := x.m[classID]
	if cn.own {
		f(graph.NodeID(classID))
	}
	for id := range cn.instances {
		f(id)
	}
}
