//go:build race

package lockorder_test

const raceEnabled = true
