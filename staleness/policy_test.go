package staleness_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/staleness"
)

func TestCheckBoundaries(t *testing.T) {
	for _, max := range []uint64{0, 1, 2, 10, 1000} {
		p := staleness.Policy{MaxStaleness: max}
		const current = 5000
		if max > 0 {
			assert.NoError(t, p.Check(current, current-(max-1)), "staleness %d, bound %d", max-1, max)
		}
		assert.NoError(t, p.Check(current, current-max), "staleness %d = bound is accepted", max)

		err := p.Check(current, current-(max+1))
		require.Error(t, err, "staleness %d, bound %d", max+1, max)
		assert.ErrorIs(t, err, staleness.ErrTooStale)
		assert.NotErrorIs(t, err, staleness.ErrFutureVersion)
		var se *staleness.StaleError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, staleness.StaleError{Current: current, Base: current - max - 1, Staleness: max + 1, Max: max}, *se)
		assert.False(t, se.Future())
		assert.Zero(t, se.Ahead())
		assert.Equal(t, "too-stale", se.ErrorType())
	}
}

func TestZeroPolicyIsSynchronous(t *testing.T) {
	var p staleness.Policy
	assert.NoError(t, p.Check(7, 7))
	assert.NoError(t, p.Check(0, 0))
	err := p.Check(7, 6)
	assert.ErrorIs(t, err, staleness.ErrTooStale)
	assert.EqualError(t, err, "staleness: gradient staleness 1 exceeds bound 0 (computed on version 6, current 7)")
}

func TestFutureVersion(t *testing.T) {
	for _, max := range []uint64{0, 10, math.MaxUint64} {
		err := staleness.Policy{MaxStaleness: max}.Check(12, 15)
		require.Error(t, err, "bound %d", max)
		assert.ErrorIs(t, err, staleness.ErrFutureVersion)
		assert.NotErrorIs(t, err, staleness.ErrTooStale)
		var se *staleness.StaleError
		require.ErrorAs(t, err, &se)
		assert.True(t, se.Future())
		assert.Zero(t, se.Staleness, "not the wrapped-around 12-15")
		assert.Equal(t, uint64(3), se.Ahead())
		assert.Equal(t, "future-version", se.ErrorType())
		assert.EqualError(t, err, "staleness: gradient computed on version 15, 3 ahead of the current version 12")
	}
}

func TestExtremeVersions(t *testing.T) {
	p := staleness.Policy{MaxStaleness: math.MaxUint64}
	assert.NoError(t, p.Check(math.MaxUint64, 0))

	p.MaxStaleness = math.MaxUint64 - 1
	var se *staleness.StaleError
	require.ErrorAs(t, p.Check(math.MaxUint64, 0), &se)
	assert.Equal(t, uint64(math.MaxUint64), se.Staleness)

	require.ErrorAs(t, p.Check(0, math.MaxUint64), &se)
	assert.Zero(t, se.Staleness)
	assert.Equal(t, uint64(math.MaxUint64), se.Ahead())
}

// incidentCheck is the check of incident IR-2024-0319-001, as it would have
// behaved had it rejected instead of only logging: `staleness > max + 1`.
func incidentCheck(staleness, max uint64) bool { return !(staleness > max+1) }

func TestIncidentFigures(t *testing.T) {
	p := staleness.Policy{MaxStaleness: 10}
	const current = 1000
	for _, tc := range []struct {
		worker    string
		staleness uint64
		accept    bool
	}{
		{"w-23", 15, false},
		{"w-17", 12, false},
		{"w-09", 18, false},
		{"at the bound", 10, true},
		{"one past the bound", 11, false},
	} {
		t.Run(fmt.Sprintf("%s staleness %d", tc.worker, tc.staleness), func(t *testing.T) {
			err := p.Check(current, current-tc.staleness)
			if tc.accept {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, staleness.ErrTooStale)
			var se *staleness.StaleError
			require.True(t, errors.As(err, &se))
			assert.Equal(t, tc.staleness, se.Staleness)
			assert.Equal(t, uint64(10), se.Max)
		})
	}
	// The incident's off-by-one lets a gradient 11 versions old through a
	// bound of 10; Check does not.
	assert.True(t, incidentCheck(11, 10), "the incident's check accepts staleness 11")
	assert.ErrorIs(t, p.Check(current, current-11), staleness.ErrTooStale)
	for s := uint64(0); s <= 30; s++ {
		if s != 11 {
			assert.Equal(t, incidentCheck(s, 10), p.Check(current, current-s) == nil,
				"the two checks differ only at 11, not at %d", s)
		}
	}
}
