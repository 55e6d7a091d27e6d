//go:build !race

package lockorder_test

const raceEnabled = false
