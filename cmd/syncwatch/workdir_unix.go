//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
)

// own creates the owner file at path, locked for as long as the process
// lives or until unlock is called. It is locked under another name and
// renamed: a sweep never finds it unlocked.
func own(path string) (unlock func(), err error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".owning-")
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// orphaned reports whether path is an owner file no live run holds.
func orphaned(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false // no owner file: kept, or not ours
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
