//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run killed outright leaves its work directory, which the next run
// removes; a live run's, and a kept one, it leaves alone.
func TestNextRunRemovesAKilledRunsWorkDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	kept, release, err := newWorkDir(true)
	require.NoError(t, err)
	release()
	live, releaseLive, err := newWorkDir(false)
	require.NoError(t, err)
	defer releaseLive()

	// A run killed outright: its owner file, no longer locked.
	dead := filepath.Join(tmp, "syncwatch-dead")
	require.NoError(t, os.Mkdir(dead, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dead, ownerFile), nil, 0o600))

	_, releaseNext, err := newWorkDir(false)
	require.NoError(t, err)
	defer releaseNext()
	assert.NoDirExists(t, dead, "the killed run's")
	assert.DirExists(t, live, "the live run's")
	assert.DirExists(t, kept, "the kept one")
}
