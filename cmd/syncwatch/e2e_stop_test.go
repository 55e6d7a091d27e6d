//go:build unix

package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// workDirs returns the syncwatch work directories in tmp.
func workDirs(t *testing.T, tmp string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(tmp, "syncwatch-*"))
	require.NoError(t, err)
	return dirs
}

// A run stopped by SIGTERM or SIGINT passes the signal on to go test,
// removes its work directory and exits with the shell's code for it.
func TestStoppedRunRemovesItsWorkDir(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		tmp := t.TempDir()
		started := filepath.Join(t.TempDir(), "started")
		root, err := filepath.Abs("../..")
		require.NoError(t, err)
		cmd := exec.Command(binary, "test", "-syncwatch", root, "-count=1", ".")
		cmd.Dir = filepath.Join("testdata", "stopped")
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "SYNCWATCH_E2E_STARTED="+started)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		for {
			if _, err := os.Stat(started); err == nil {
				break
			}
			select {
			case err := <-exited:
				t.Fatalf("the run ended before its test started: %v\n%s", err, out.String())
			case <-time.After(10 * time.Millisecond): // polling a file: nothing to wait on
			}
		}
		require.Len(t, workDirs(t, tmp), 1, "the run's work directory")
		require.NoError(t, cmd.Process.Signal(sig))
		err = <-exited
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, sig.String())
		assert.Equal(t, 128+int(sig), exit.ExitCode(), sig.String())
		assert.Empty(t, workDirs(t, tmp), "%v left the work directory", sig)
	}
}
