package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// The summary counts every test a finding was seen in, in every binary:
// those a binary grouped under one report (Tests), not only the test of
// the occurrence it shows (Test).
func TestSummaryCountsEveryTestOfAFinding(t *testing.T) {
	path := filepath.Join(t.TempDir(), "findings")
	var lines []byte
	for _, f := range []lockordertest.Finding{
		{Binary: "store.test", Test: "TestPut", Tests: []string{"TestPut", "TestBatch"}, Kind: lockorder.KindCycle, Key: "k", Message: "cycle", Instances: 8},
		{Binary: "cmd.test", Test: "TestCompact", Tests: []string{"TestCompact", "TestPut"}, Kind: lockorder.KindCycle, Key: "k", Message: "cycle", Instances: 1},
	} {
		b, err := json.Marshal(f)
		require.NoError(t, err)
		lines = append(append(lines, b...), '\n')
	}
	require.NoError(t, os.WriteFile(path, lines, 0o644))
	fs, err := readFindings(path)
	require.NoError(t, err)
	require.Len(t, fs, 1, "one code-level cycle, one finding")
	var out bytes.Buffer
	writeSummary(&out, fs)
	assert.Contains(t, out.String(), "seen in 3 test(s): TestPut, TestBatch, TestCompact; 9 instance(s); in store.test, cmd.test")
}
