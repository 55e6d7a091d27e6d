package main

import (
	"os"
	"path/filepath"
	"strings"
)

// The work directory holds the rewritten files, the go.mod and the
// findings file of one run. A run removes its own when it ends, also when
// it is interrupted (see interrupts). One killed outright (SIGKILL, the
// machine's OOM killer) cannot: the next run removes it. A run holds a
// lock on its directory's owner file for as long as it lives, which the
// kernel lets go of however the process ends; a later run removes every
// syncwatch directory whose owner file it can lock. A directory kept
// with -keep has no owner file and is left alone.

// ownerFile is the file, in a work directory, that its run holds locked.
const ownerFile = ".syncwatch-owner"

// newWorkDir makes a work directory. Unless keep, the run holds it
// (owner), if the file system lets it, until release is called; release
// removes it.
func newWorkDir(keep bool) (dir string, release func(), err error) {
	sweepWorkDirs(os.TempDir())
	dir, err = os.MkdirTemp("", "syncwatch-")
	if err != nil {
		return "", nil, err
	}
	if keep {
		return dir, func() {}, nil
	}
	unlock, err := own(filepath.Join(dir, ownerFile))
	if err != nil {
		// A file system with no flock: the run goes on, and a directory
		// it leaves if killed outright stays, as it would without this.
		unlock = func() {}
	}
	return dir, func() {
		os.RemoveAll(dir)
		unlock()
	}, nil
}

// sweepWorkDirs removes the work directories in tmp left by runs that no
// longer live.
func sweepWorkDirs(tmp string) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "syncwatch-") {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		if orphaned(filepath.Join(dir, ownerFile)) {
			os.RemoveAll(dir)
		}
	}
}
