package etcd_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	etcdbarrier "github.com/syncwatch/syncwatch/barrier/etcd"
)

// mismatchOf returns err as a *SettingsMismatchError, failing t if it is
// not one.
func mismatchOf(t *testing.T, err error) *etcdbarrier.SettingsMismatchError {
	t.Helper()
	var se *etcdbarrier.SettingsMismatchError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, etcdbarrier.ErrSettingsMismatch)
	assert.Equal(t, "etcd-settings-mismatch", se.ErrorType())
	return se
}

// Two processes with different party counts on one barrier: process A
// says 2 parties and runs rank 0, process B says 3 and runs ranks 1 and
// 2. B's ranks cannot join (they would pass generation 0 with only two
// ranks there), A's rank is untouched, and with a process that agrees
// the barrier works as if B had never tried.
func TestPartyCountMismatchIsRefusedAtJoin(t *testing.T) {
	p := prefix(t)
	opts := []etcdbarrier.Option{etcdbarrier.WithTimeout(time.Minute)}
	a := etcdbarrier.NewBarrier(client(t, server), p, 2, opts...)
	require.NoError(t, a.Join(t.Context(), 0))
	b := etcdbarrier.NewBarrier(client(t, server), p, 3, opts...)
	for _, r := range []int{1, 2} {
		se := mismatchOf(t, b.Join(t.Context(), r))
		assert.Equal(t, r, se.Rank)
		assert.Equal(t, 3, se.Given.Parties)
		assert.Equal(t, 2, se.Recorded.Parties)
		assert.Equal(t, "barrier", se.Recorded.Kind)
		assert.Contains(t, se.Error(), "has parties 3, recorded 2 by rank 0 (pid ")
	}
	require.NoError(t, b.Close())

	c := etcdbarrier.NewBarrier(client(t, server), p, 2, opts...)
	require.NoError(t, c.Join(t.Context(), 1), "the rank B tried is free")
	bs := []*etcdbarrier.Barrier{a, c}
	for gen := range uint64(2) {
		for r, res := range awaitRanks(t, bs, all(2, ""), within(time.Minute)) {
			require.NoError(t, res.err, "rank %d", r)
			assert.Equal(t, gen, res.gen)
		}
	}
	closeAll(t, client(t, server), p, bs)
}

// The settings are those of the first Join, whichever it is: here the
// process saying 3 parties comes first, and the one saying 2 is refused.
// The history is a setting too; the timeout, a bound of each process's
// own, is not.
func TestTheFirstJoinRecordsTheSettings(t *testing.T) {
	p := prefix(t)
	three := etcdbarrier.NewBarrier(client(t, server), p, 3, etcdbarrier.WithTimeout(time.Minute))
	require.NoError(t, three.Join(t.Context(), 1))
	two := etcdbarrier.NewBarrier(client(t, server), p, 2, etcdbarrier.WithTimeout(time.Minute))
	se := mismatchOf(t, two.Join(t.Context(), 0))
	assert.Equal(t, etcdbarrier.Settings{Kind: "barrier", Parties: 3, History: etcdbarrier.DefaultHistory}, se.Recorded)
	assert.Contains(t, se.Error(), "recorded 3 by rank 1 (pid ")
	require.NoError(t, two.Close())

	history := etcdbarrier.NewBarrier(client(t, server), p, 3, etcdbarrier.WithHistory(4))
	se = mismatchOf(t, history.Join(t.Context(), 0))
	assert.Equal(t, 4, se.Given.History)
	assert.Contains(t, se.Error(), "has history 4, recorded 16 by ")
	require.NoError(t, history.Close())

	others := etcdbarrier.NewBarrier(client(t, server), p, 3, etcdbarrier.WithTimeout(2*time.Minute))
	require.NoError(t, others.Join(t.Context(), 0))
	require.NoError(t, others.Join(t.Context(), 2))
	bs := []*etcdbarrier.Barrier{others, three, others}
	for r, res := range awaitRanks(t, bs, all(3, ""), within(time.Minute)) {
		require.NoError(t, res.err, "rank %d", r)
		assert.Zero(t, res.gen)
	}
	assert.NoError(t, others.Close())
	closeAll(t, client(t, server), p, []*etcdbarrier.Barrier{nil, three})
}

// A clock's workers must agree on their number and on maxSkew, and a
// clock cannot share a barrier's prefix.
func TestClockSettingsMismatch(t *testing.T) {
	p := prefix(t)
	cs := clocks(t, p, 2, 1)
	skew := etcdbarrier.NewClock(client(t, server), p, 2, 3)
	se := mismatchOf(t, skew.Join(t.Context(), 1))
	assert.Contains(t, se.Error(), "has maxSkew 3, recorded 1 by rank 0 (pid ")
	require.NoError(t, skew.Close())

	b := etcdbarrier.NewBarrier(client(t, server), p, 2)
	se = mismatchOf(t, b.Join(t.Context(), 1))
	assert.Equal(t, "clock", se.Recorded.Kind)
	assert.True(t, errors.Is(se, etcdbarrier.ErrSettingsMismatch))
	require.NoError(t, b.Close())
	closeClocks(t, client(t, server), p, cs)
}
