//go:build !unix

package main

// own does nothing where there is no flock: a run killed outright leaves
// its work directory behind.
func own(string) (unlock func(), err error) { return func() {}, nil }

// orphaned reports false: without flock no run can tell a live owner.
func orphaned(string) bool { return false }
