//go:build !syncwatch_off

package lockorder_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// freshWaitProfile empties the wait profile and sets the span threshold,
// which decides whether waits keep their stacks.
func freshWaitProfile(t *testing.T, threshold time.Duration) {
	t.Helper()
	fresh(t)
	lockorder.ResetWaitProfile()
	lockorder.Configure(lockorder.WithWaitThreshold(threshold))
	t.Cleanup(func() {
		lockorder.Configure(lockorder.WithWaitThreshold(10 * time.Millisecond))
		lockorder.ResetWaitProfile()
	})
}

func waitProfile(t *testing.T) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, lockorder.WriteWaitProfile(&buf))
	p, err := profile.Parse(&buf)
	require.NoError(t, err)
	require.NoError(t, p.CheckValid())
	return p
}

// samplesOf returns the samples of the lock called name.
func samplesOf(p *profile.Profile, name string) []*profile.Sample {
	var out []*profile.Sample
	for _, s := range p.Sample {
		if len(s.Label["lock"]) == 1 && s.Label["lock"][0] == name {
			out = append(out, s)
		}
	}
	return out
}

func functions(s *profile.Sample) []string {
	var fns []string
	for _, l := range s.Location {
		for _, ln := range l.Line {
			fns = append(fns, ln.Function.Name)
		}
	}
	return fns
}

func TestWaitProfileAggregatesShortWaitsPerLock(t *testing.T) {
	freshWaitProfile(t, time.Hour)
	m := lockorder.NewMutex("profiled")
	name := nameOf(t, m)
	contend(t, m)
	contend(t, m)

	p := waitProfile(t)
	require.Len(t, p.SampleType, 2)
	assert.Equal(t, "contentions", p.SampleType[0].Type)
	assert.Equal(t, "count", p.SampleType[0].Unit)
	assert.Equal(t, "delay", p.SampleType[1].Type)
	assert.Equal(t, "nanoseconds", p.SampleType[1].Unit)
	require.NotNil(t, p.PeriodType)
	assert.Equal(t, "contentions", p.PeriodType.Type)
	assert.Equal(t, "count", p.PeriodType.Unit)
	assert.EqualValues(t, 1, p.Period)

	ss := samplesOf(p, name)
	require.Len(t, ss, 1, "both waits are one sample")
	s := ss[0]
	assert.EqualValues(t, 2, s.Value[0])
	assert.Positive(t, s.Value[1])
	assert.Equal(t, []string{"profiled"}, s.Label["class"])
	assert.Equal(t, []string{"lockorder.wait(" + name + ")"}, functions(s), "a short wait keeps no stack")
}

func TestWaitProfileKeepsStacksOfLongWaits(t *testing.T) {
	freshWaitProfile(t, 0)
	m := lockorder.NewMutex("profiled-long")
	name := nameOf(t, m)
	contend(t, m)

	ss := samplesOf(waitProfile(t), name)
	require.Len(t, ss, 1)
	assert.EqualValues(t, 1, ss[0].Value[0])
	fns := functions(ss[0])
	require.NotEmpty(t, fns)
	assert.Equal(t, "lockorder.wait("+name+")", fns[0])
	require.Greater(t, len(fns), 1)
	assert.Equal(t, "github.com/syncwatch/syncwatch/lockorder_test.lockContended", fns[1],
		"the waiter's stack starts at its call to Lock")
	assert.NotEmpty(t, ss[0].Location[1].Line[0].Function.Filename)
	assert.Positive(t, ss[0].Location[1].Line[0].Line)
}

func TestWaitProfileIsBounded(t *testing.T) {
	freshWaitProfile(t, time.Hour)
	lockorder.RecordWaits("bounded", lockorder.MaxWaitProfileKeys+10, time.Millisecond)

	p := waitProfile(t)
	classes := map[string]int{}
	for _, s := range p.Sample {
		classes[s.Label["class"][0]]++
	}
	assert.Equal(t, map[string]int{"bounded": lockorder.MaxWaitProfileKeys, "(other)": 1}, classes)
	other := samplesOf(p, "(other)")
	require.Len(t, other, 1)
	assert.Equal(t, []int64{10, int64(10 * time.Millisecond)}, other[0].Value)
	assert.Equal(t, []string{"lockorder.wait((other))"}, functions(other[0]))
}

// Short waits add to counters cached on the lock, without the profile's
// lock: many goroutines waiting on one lock at once lose none.
func TestWaitProfileCountsConcurrentWaitsExactly(t *testing.T) {
	freshWaitProfile(t, time.Hour)
	m := lockorder.NewMutex("profiled-concurrent")
	name := nameOf(t, m)
	const goroutines, waits = 8, 500
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() { lockorder.RecordWaitsOn(m, waits, time.Microsecond) })
	}
	wg.Wait()
	ss := samplesOf(waitProfile(t), name)
	require.Len(t, ss, 1)
	assert.Equal(t, []int64{goroutines * waits, goroutines * waits * int64(time.Microsecond)}, ss[0].Value)

	lockorder.ResetWaitProfile() // the cached counters belong to the old profile now
	lockorder.RecordWaitsOn(m, 3, time.Millisecond)
	ss = samplesOf(waitProfile(t), name)
	require.Len(t, ss, 1)
	assert.Equal(t, []int64{3, int64(3 * time.Millisecond)}, ss[0].Value)
}

func TestResetWaitProfileForgetsWaits(t *testing.T) {
	freshWaitProfile(t, time.Hour)
	m := lockorder.NewMutex("profiled-reset")
	name := nameOf(t, m)
	contend(t, m)
	require.Len(t, samplesOf(waitProfile(t), name), 1)

	lockorder.ResetWaitProfile()
	assert.Empty(t, samplesOf(waitProfile(t), name))
	contend(t, m)
	ss := samplesOf(waitProfile(t), name)
	require.Len(t, ss, 1)
	assert.EqualValues(t, 1, ss[0].Value[0], "counting starts again from zero")
}

func TestWaitProfileReadsInGoToolPprof(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	freshWaitProfile(t, time.Hour)
	m := lockorder.NewMutex("profiled-tool")
	name := nameOf(t, m)
	contend(t, m)

	dir := t.TempDir()
	file := filepath.Join(dir, "waits.pb.gz")
	f, err := os.Create(file)
	require.NoError(t, err)
	require.NoError(t, lockorder.WriteWaitProfile(f))
	require.NoError(t, f.Close())

	pprof := func(flag string) string {
		cmd := exec.Command(goBin, "tool", "pprof", flag, file)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go tool pprof %s: %s", flag, out)
		return string(out)
	}
	top := pprof("-top")
	assert.Contains(t, top, "lockorder.wait("+name+")")
	assert.Contains(t, top, "Type: delay")
	tags := pprof("-tags")
	assert.Regexp(t, `(?m)^\s*lock: Total .*\n.*: `+regexp.QuoteMeta(name)+`$`, tags)
	assert.Regexp(t, `(?m)^\s*class: Total .*\n.*: profiled-tool$`, tags)
}

// The wait profile is gzipped, as runtime/pprof writes its profiles, and
// a failing writer's error comes back.
func TestWaitProfileIsGzipped(t *testing.T) {
	freshWaitProfile(t, time.Hour)
	var buf bytes.Buffer
	require.NoError(t, lockorder.WriteWaitProfile(&buf))
	_, err := gzip.NewReader(&buf)
	assert.NoError(t, err)
	assert.ErrorIs(t, lockorder.WriteWaitProfile(failingWriter{}), io.ErrShortWrite)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrShortWrite }
