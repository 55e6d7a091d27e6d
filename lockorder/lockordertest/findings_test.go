package lockordertest_test

import (
	"bufio"
	"encoding/json"
	"fmt"
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

// RunAndVerify checks as VerifyTestMain does, and returns the code
// instead of exiting, so that a harness that exits by itself still runs.
func TestRunAndVerifyReturnsTheCode(t *testing.T) {
	if s := os.Getenv("LOCKORDERTEST_RUNANDVERIFY"); s != "" {
		lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))
		code := lockordertest.RunAndVerify(funcM(exitScenarios[s]))
		fmt.Printf("RunAndVerify returned %d\n", code)
		os.Exit(0)
	}
	if lockorder.CurrentMode() == lockorder.ModeOff {
		t.Skip("built with syncwatch_off")
	}
	for scenario, want := range map[string]string{"straggler": "returned 1", "idle": "returned 0"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRunAndVerifyReturnsTheCode$")
		cmd.Env = append(os.Environ(), "LOCKORDERTEST_RUNANDVERIFY="+scenario)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), want, scenario)
	}
}
