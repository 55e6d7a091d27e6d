package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Without -out the files go to a new temporary directory, which is kept
// and named in the result, for main to print.
func TestFilesInTemporaryDirectory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	res, err := run(ctx, Config{BarrierTimeout: testTimeout, Out: &out})
	require.NoError(t, err, out.String())
	assert.Equal(t, tmp, filepath.Dir(res.Files.Dir))
	for _, f := range []string{res.Files.Spans, res.Files.DOT, res.Files.WaitProfile} {
		assert.FileExists(t, f)
	}
}

// A run whose lock graph cannot be drawn still names the directory holding
// what it wrote, so that nothing is left behind unannounced.
func TestFilesNamedWhenDotFails(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in dot is a shell script")
	}
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "dot"), []byte("#!/bin/sh\necho broken >&2\nexit 1\n"), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	res, err := run(ctx, Config{BarrierTimeout: testTimeout, Out: &out})
	require.ErrorContains(t, err, "dot -Tsvg")
	assert.Equal(t, tmp, filepath.Dir(res.Files.Dir))
	assert.FileExists(t, res.Files.DOT)
	assert.Empty(t, res.Files.SVG)
}
