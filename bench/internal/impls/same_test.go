package impls_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/bench/internal/impls"
)

// TestCopiesAreCurrent fails when a copy of the workloads differs from
// its source: every implementation must run the same code.
func TestCopiesAreCurrent(t *testing.T) {
	src, err := os.ReadFile(impls.Source)
	require.NoError(t, err)
	for _, pkg := range impls.Copies {
		got, err := os.ReadFile(filepath.Join(pkg, "workloads.go"))
		require.NoError(t, err)
		assert.Equal(t, string(impls.Derive(src, pkg)), string(got),
			"%s/workloads.go is stale: run go generate in bench/internal/impls", pkg)
	}
}

func TestDeriveRejectsOtherSources(t *testing.T) {
	assert.Panics(t, func() { impls.Derive([]byte("// x\n\npackage other\n"), "x") })
	assert.Panics(t, func() { impls.Derive([]byte("package syncimpl\n"), "x") })
}
