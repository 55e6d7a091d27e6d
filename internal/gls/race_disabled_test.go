//go:build !race

package gls_test

const raceEnabled = false
