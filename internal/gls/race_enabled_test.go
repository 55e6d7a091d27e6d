//go:build race

package gls_test

// raceEnabled says the race detector is on, under which the owners' marks
// are atomic stores (internal/held's idle_race.go).
const raceEnabled = true
