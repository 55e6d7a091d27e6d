package main_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A test file that embeds itself and declares TestMain, beside another
// test file: its TestMain cannot be wrapped, and no other is added (two
// would not build); the summary says the package's tests run unchecked.
func TestAnEmbeddedTestFileWithTestMainRunsItsTests(t *testing.T) {
	r := syncwatch(t, "embedtestmain", nil, "test", "-count=1", "./...")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "ok  \texample.com/embedtestmain")
	assert.Contains(t, r.stdout+r.stderr, "main_test.go: its tests run without lockordertest's verdict")
}

// A package whose only test file is embedded still gets the generated
// TestMain: a lock-order inversion in the package's (rewritten) code
// fails its tests.
func TestTestsOfAnEmbeddedTestFileAreChecked(t *testing.T) {
	r := syncwatch(t, "embedonlytest", nil, "test", "-count=1", "./...")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "lock-order-cycle")
}

// A generic function and type of an embedded file meet rewritten code:
// an instance's parameters and fields are the origin's slots, and stay
// sync with them.
func TestGenericsOfAnEmbeddedFileStaySync(t *testing.T) {
	r := syncwatch(t, "embedgeneric", nil, "test", "-count=1", "./...")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "ok  \texample.com/embedgeneric")
}

// An embedded file with a //line directive (generated code's): it is
// known by its own name, not the one the directive gives its lines.
func TestAnEmbeddedFileWithALineDirectiveStaysSync(t *testing.T) {
	r := syncwatch(t, "embedlinedirective", nil, "test", "-count=1", "./...")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "ok  \texample.com/embedlinedirective")
}
