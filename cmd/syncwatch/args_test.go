package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A bool flag of go test, or of the test binary spelt -test.name, takes no
// value: the argument after it is still a package.
func TestBoolFlagsLeaveThePackage(t *testing.T) {
	for _, args := range [][]string{
		{"-c", "./store"},
		{"-buildvcs", "./store"},
		{"-test.v", "./store"},
		{"-test.short", "./store"},
		{"-v", "-race", "-cover", "./store"},
	} {
		o, err := parseArgs(args, false)
		require.NoError(t, err, "%v", args)
		assert.Equal(t, []string{"./store"}, o.patterns, "%v", args)
		assert.Equal(t, args[:len(args)-1], o.goFlags, "%v", args)
	}
}

// A flag with a value keeps it, spelt either way, and a -test. flag that
// is not a bool (-test.run) takes the next argument.
func TestValueFlagsTakeTheirValue(t *testing.T) {
	o, err := parseArgs([]string{"-run", "TestX", "-count=1", "-test.run", "TestY", "./..."}, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"-run", "TestX", "-count=1", "-test.run", "TestY"}, o.goFlags)
	assert.Equal(t, []string{"./..."}, o.patterns)

	_, err = parseArgs([]string{"./...", "-run"}, false)
	require.ErrorIs(t, err, errUsage)
	assert.Contains(t, err.Error(), "flag -run needs a value")
}

// -h and -help after the command print the usage on standard output and
// succeed, as they do before it.
func TestHelpAfterTheCommand(t *testing.T) {
	for _, args := range [][]string{{"test", "-h"}, {"test", "-help"}, {"run", "--help"}, {"test", "-v", "-h", "./..."}} {
		var stdout, stderr bytes.Buffer
		code := runMain(args, &stdout, &stderr)
		assert.Equal(t, 0, code, "%v: %s", args, stderr.String())
		assert.Contains(t, stdout.String(), "usage:", "%v", args)
		assert.Empty(t, stderr.String(), "%v", args)
	}
}
