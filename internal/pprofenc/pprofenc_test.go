package pprofenc_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/pprofenc"
)

// The differential test: random profiles, written by pprofenc and by the
// pprof package itself (built the way lockorder built its wait profile
// before it had pprofenc), parse to the same profile.
func TestWritesWhatThePprofPackageWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 100 {
		p := randomProfile(r)
		ours := parse(t, p.Encode())
		theirs := parse(t, write(t, pprofProfile(p).Write))
		require.Equal(t, theirs.String(), ours.String(), "profile %d", i)
		assert.Equal(t, theirs.DefaultSampleType, ours.DefaultSampleType)
		assert.Equal(t, theirs.TimeNanos, ours.TimeNanos)
		assert.Equal(t, theirs.DurationNanos, ours.DurationNanos)
		require.Len(t, ours.Mapping, 1)
		assert.Equal(t, theirs.Mapping[0], ours.Mapping[0])
	}
}

func TestEmptyProfile(t *testing.T) {
	p := &pprofenc.Profile{
		SampleTypes:       []pprofenc.ValueType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}},
		DefaultSampleType: "delay",
		PeriodType:        pprofenc.ValueType{Type: "contentions", Unit: "count"},
		Period:            1,
		TimeNanos:         1700000000000000000,
		DurationNanos:     5e9,
	}
	got := parse(t, p.Encode())
	assert.Empty(t, got.Sample)
	assert.Equal(t, "delay", got.DefaultSampleType)
	assert.Equal(t, &profile.ValueType{Type: "contentions", Unit: "count"}, got.PeriodType)
	assert.Equal(t, int64(1), got.Period)
	assert.Equal(t, int64(1700000000000000000), got.TimeNanos)
	assert.Equal(t, int64(5e9), got.DurationNanos)
}

func write(t *testing.T, f func(io.Writer) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, f(&buf))
	return buf.Bytes()
}

func parse(t *testing.T, b []byte) *profile.Profile {
	t.Helper()
	p, err := profile.ParseData(b)
	require.NoError(t, err)
	require.NoError(t, p.CheckValid())
	return p
}

// randomProfile draws samples from a small pool of frames, so that
// functions and locations are shared between samples and within stacks.
func randomProfile(r *rand.Rand) *pprofenc.Profile {
	nTypes := 1 + r.IntN(3)
	p := &pprofenc.Profile{
		PeriodType:    pprofenc.ValueType{Type: "contentions", Unit: "count"},
		Period:        1 + r.Int64N(100),
		TimeNanos:     r.Int64(),
		DurationNanos: r.Int64N(1e12),
	}
	for i := range nTypes {
		p.SampleTypes = append(p.SampleTypes, pprofenc.ValueType{Type: fmt.Sprint("type", i), Unit: []string{"count", "nanoseconds"}[i%2]})
	}
	p.DefaultSampleType = p.SampleTypes[r.IntN(nTypes)].Type
	var pool []pprofenc.Frame
	for range 1 + r.IntN(12) {
		pool = append(pool, pprofenc.Frame{
			Function: fmt.Sprint("pkg.f", r.IntN(6)),
			File:     fmt.Sprint("/src/file", r.IntN(3), ".go"),
			Line:     r.Int64N(4),
		})
	}
	for range r.IntN(20) {
		s := pprofenc.Sample{}
		for range r.IntN(8) {
			s.Stack = append(s.Stack, pool[r.IntN(len(pool))])
		}
		for range nTypes {
			s.Values = append(s.Values, r.Int64N(1e9)-1e3)
		}
		for _, k := range []string{"class", "lock"}[:r.IntN(3)] {
			s.Labels = append(s.Labels, pprofenc.Label{Key: k, Value: fmt.Sprint(k, r.IntN(3))})
		}
		p.Samples = append(p.Samples, s)
	}
	return p
}

// pprofProfile builds p with the pprof package: one mapping with
// everything symbolized, functions interned by name and file, locations
// by frame, numbered in order of first use.
func pprofProfile(p *pprofenc.Profile) *profile.Profile {
	out := &profile.Profile{
		DefaultSampleType: p.DefaultSampleType,
		PeriodType:        &profile.ValueType{Type: p.PeriodType.Type, Unit: p.PeriodType.Unit},
		Period:            p.Period,
		TimeNanos:         p.TimeNanos,
		DurationNanos:     p.DurationNanos,
	}
	for _, t := range p.SampleTypes {
		out.SampleType = append(out.SampleType, &profile.ValueType{Type: t.Type, Unit: t.Unit})
	}
	m := &profile.Mapping{ID: 1, HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	out.Mapping = []*profile.Mapping{m}
	funcs := map[[2]string]*profile.Function{}
	locs := map[pprofenc.Frame]*profile.Location{}
	for _, s := range p.Samples {
		ps := &profile.Sample{Value: append([]int64(nil), s.Values...)}
		for _, f := range s.Stack {
			l := locs[f]
			if l == nil {
				fk := [2]string{f.Function, f.File}
				fn := funcs[fk]
				if fn == nil {
					fn = &profile.Function{ID: uint64(len(out.Function) + 1), Name: f.Function, SystemName: f.Function, Filename: f.File}
					funcs[fk] = fn
					out.Function = append(out.Function, fn)
				}
				l = &profile.Location{ID: uint64(len(out.Location) + 1), Mapping: m, Line: []profile.Line{{Function: fn, Line: f.Line}}}
				locs[f] = l
				out.Location = append(out.Location, l)
			}
			ps.Location = append(ps.Location, l)
		}
		for _, l := range s.Labels {
			if ps.Label == nil {
				ps.Label = map[string][]string{}
			}
			ps.Label[l.Key] = append(ps.Label[l.Key], l.Value)
		}
		out.Sample = append(out.Sample, ps)
	}
	return out
}
