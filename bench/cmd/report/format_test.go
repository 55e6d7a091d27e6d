package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFormat(t *testing.T) {
	assert.Equal(t, "5.23", formatNs(5.234))
	assert.Equal(t, "48.1", formatNs(48.12))
	assert.Equal(t, "1,234", formatNs(1234.4))
	assert.Equal(t, "10,247,734,618", formatNs(10247734618))
	assert.Equal(t, "0", formatCount(0))
	assert.Equal(t, "1,000,000", formatCount(1e6))
	assert.Equal(t, "834,895.5", formatCount(834895.5))
	assert.Equal(t, "1.0", formatCount(0.96))
	assert.Equal(t, "0.5", formatCount(0.5))
	assert.Equal(t, "1.05x", formatRatio(1.049))
	assert.Equal(t, "12.3x", formatRatio(12.34))
	assert.Equal(t, "1,146x", formatRatio(1146.2))
	assert.Equal(t, "21.1", formatMetric(21.14))
	assert.Equal(t, "0.00", formatMetric(0.0000153))
	assert.Equal(t, "-3.25", formatMetric(-3.25))
	assert.Equal(t, "24,620", formatMetric(24620))
	assert.Equal(t, "-1,234", group(-1234))
}

func TestTable(t *testing.T) {
	var b strings.Builder
	table(&b, []string{"a", "b"}, [][]string{{"x|y", "1"}}, 1)
	assert.Equal(t, "| a | b |\n|---|--:|\n| x\\|y | 1 |\n", b.String())
}
