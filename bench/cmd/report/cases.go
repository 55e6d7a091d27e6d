package main

// The implementations, as the benchmarks label them.
const (
	implSync     = "sync"
	implOffTag   = "off-tag"
	implOff      = "off"
	implTrace    = "trace"
	implCheck    = "check"
	implDeadlock = "deadlock"
)

// implOrder is the order of a case's rows: the baseline, lockorder from
// the cheapest build to the most checking mode, then go-deadlock.
var implOrder = []string{implSync, implOffTag, implOff, implTrace, implCheck, implDeadlock}

func implRank(impl string) int {
	for i, s := range implOrder {
		if s == impl {
			return i
		}
	}
	return len(implOrder)
}

// implTitle is an impl's name in the tables.
func implTitle(impl string) string {
	switch impl {
	case implSync:
		return "sync"
	case implOffTag:
		return "lockorder, syncwatch_off run"
	case implOff, implTrace, implCheck:
		return "lockorder " + impl
	case implDeadlock:
		return "go-deadlock"
	}
	return impl
}

// runKind says how go test must run a case.
type runKind int

const (
	// micro: -benchtime as given, in both builds.
	micro runKind = iota
	// scaling: -benchtime as given, with -cpu 1,2, untagged build only.
	scaling
	// oneShot: an op is a whole program; -benchtime 1x, untagged only.
	oneShot
)

// Case is one benchmark of the suite.
type Case struct {
	// ID is the case's letter in the issue: "a".
	ID string
	// Bench is the benchmark function: "BenchmarkUncontended".
	Bench string
	// Title says what it measures.
	Title string
	Kind  runKind
}

// Label is "(a) uncontended Lock/Unlock".
func (c Case) Label() string { return "(" + c.ID + ") " + c.Title }

// cases are the suite's benchmarks, in the order.
var cases = []Case{
	{"a", "BenchmarkUncontended", "uncontended Lock/Unlock", micro},
	{"b", "BenchmarkNestedPair", "nested pair A, B", micro},
	{"c", "BenchmarkNested4", "nested 4 deep", micro},
	{"d", "BenchmarkRLock", "RLock/RUnlock", micro},
	{"e", "BenchmarkSharedParallel", "shared mutex, parallel", micro},
	{"e+", "BenchmarkRLockParallel", "shared RWMutex, readers in parallel (extra)", micro},
	{"f", "BenchmarkPerGoroutine", "mutex per goroutine, parallel", scaling},
	{"g", "BenchmarkHeldElsewhere", "1000 locks held elsewhere", micro},
	{"h", "BenchmarkDeepStack", "Lock 40 frames deep", micro},
	{"i", "BenchmarkChurn", "1M short-lived mutexes", oneShot},
	{"j", "BenchmarkGraphScale", "10k classes, 100k edges", oneShot},
	{"k", "BenchmarkStriped", "8 objects of 16,384 striped locks", oneShot},
	{"l", "BenchmarkLiveGoroutines", "100k live goroutines, each locking once", oneShot},
	{"m", "BenchmarkWaitGroupGo", "1M WaitGroup.Go", oneShot},
	{"n", "BenchmarkCacheNodes", "100k new locks of one class under a read lock", oneShot},
	{"o", "BenchmarkFreshGroups", "100k new WaitGroups waited in a Go'd function", oneShot},
}

// caseByID returns the case with letter id; it panics for an unknown id.
func caseByID(id string) Case {
	for _, c := range cases {
		if c.ID == id {
			return c
		}
	}
	panic("report: unknown case " + id)
}
