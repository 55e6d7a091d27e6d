package lockordertest_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// runScenario runs one of exitScenarios as a test binary under
// VerifyTestMain, with its findings recorded to a file, and returns them.
func runScenario(t *testing.T, scenario string) ([]lockordertest.Finding, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "findings.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestVerifyTestMainAtExit$")
	cmd.Env = append(os.Environ(), "LOCKORDERTEST_EXIT="+scenario, lockordertest.FindingsEnv+"="+path)
	runErr := cmd.Run()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, runErr
	}
	require.NoError(t, err)
	defer f.Close()
	var fs []lockordertest.Finding
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var one lockordertest.Finding
		require.NoError(t, json.Unmarshal(sc.Bytes(), &one))
		fs = append(fs, one)
	}
	require.NoError(t, sc.Err())
	return fs, runErr
}

// VerifyTestMain appends what failed the binary to the file that
// SYNCWATCH_FINDINGS names, one JSON object per violation; a binary that
// passes writes nothing.
func TestVerifyTestMainRecordsFindings(t *testing.T) {
	if lockorder.CurrentMode() == lockorder.ModeOff {
		t.Skip("built with syncwatch_off")
	}
	fs, err := runScenario(t, "straggler")
	require.Error(t, err, "the binary fails")
	require.Len(t, fs, 1)
	f := fs[0]
	assert.Equal(t, lockorder.KindCycle, f.Kind)
	assert.ElementsMatch(t, []string{"sA", "sB"}, f.Classes)
	assert.Len(t, f.Locks, 2)
	assert.Len(t, f.Sites, 2)
	assert.Equal(t, 1, f.Instances)
	assert.Equal(t, filepath.Base(os.Args[0]), f.Binary)
	assert.Contains(t, f.Report, "Possible deadlock scenario")

	fs, err = runScenario(t, "idle")
	assert.NoError(t, err)
	assert.Empty(t, fs)
}
