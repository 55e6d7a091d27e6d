package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMedian(t *testing.T) {
	assert.Equal(t, 3.0, median([]float64{5, 1, 3}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	assert.Equal(t, 7.0, median([]float64{7}))
}

// sampleData collects every captured output as the report would.
func sampleData(t *testing.T) *Data {
	t.Helper()
	runs := []Run{
		{Out: parseFile(t, "micro.txt")},
		{Out: parseFile(t, "scaling.txt")},
		{Out: parseFile(t, "oneshot.txt")},
		{Tagged: true, Out: parseFile(t, "tagged.txt")},
	}
	return Collect(Env{}, runs)
}

func TestCollect(t *testing.T) {
	d := sampleData(t)

	ns, ok := d.Value(false, "BenchmarkUncontended", "sync", 0, "ns/op")
	require.True(t, ok)
	assert.InDelta(t, (18.66+17.47)/2, ns, 1e-9)
	assert.Equal(t, 2, d.Samples(false, "BenchmarkUncontended", "sync", 0))

	// The untagged and tagged sync runs are kept apart.
	tagged, ok := d.Value(true, "BenchmarkUncontended", "sync", 0, "ns/op")
	require.True(t, ok)
	assert.NotEqual(t, ns, tagged)

	assert.Equal(t, []int{1, 2}, d.Procs(false, "BenchmarkPerGoroutine"))
	one, ok := d.Value(false, "BenchmarkPerGoroutine", "check", 1, "ns/op")
	require.True(t, ok)
	assert.InDelta(t, (86.14+90.17)/2, one, 1e-9)
	highest, ok := d.Value(false, "BenchmarkPerGoroutine", "check", 0, "ns/op")
	require.True(t, ok)
	assert.InDelta(t, (47.70+47.96)/2, highest, 1e-9)

	assert.Equal(t, []string{"sync", "off", "trace", "check", "deadlock"}, d.Impls(false, "BenchmarkChurn"))
	assert.Equal(t, []string{"sync", "off-tag"}, d.Impls(true, "BenchmarkUncontended"))
	assert.Equal(t, []string{"live-MiB", "mutexes", "ns/mutex"}, d.Units(false, "BenchmarkChurn"))
	assert.Empty(t, d.Units(false, "BenchmarkUncontended"))

	_, ok = d.Get(false, "BenchmarkMissing", "sync", 0)
	assert.False(t, ok)
	_, ok = d.Value(false, "BenchmarkUncontended", "sync", 0, "no-such-unit")
	assert.False(t, ok)
}
