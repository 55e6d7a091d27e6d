package paramserver_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
	"github.com/syncwatch/syncwatch/paramserver"
)

func newServer(t testing.TB, initial paramserver.Params, opts ...paramserver.Option) *paramserver.Server {
	t.Helper()
	s, err := paramserver.New(initial, opts...)
	require.NoError(t, err)
	return s
}

// fill returns n copies of x.
func fill(n int, x float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = x
	}
	return out
}

// like returns a gradient with p's keys and lengths, every element x.
func like(p paramserver.Params, x float32) paramserver.Params {
	g := make(paramserver.Params, len(p))
	for k, v := range p {
		g[k] = fill(len(v), x)
	}
	return g
}

// consume marks every report so far as seen, failing t if one that counts
// is not of the given kinds: for tests that provoke reports on purpose.
func consume(t testing.TB, kinds ...lockorder.Kind) {
	t.Helper()
	require.NoError(t, lockordertest.Find(lockordertest.IgnoreKind(kinds...)))
}

// advance applies synchronous gradients (computed on the current version)
// from worker 0 until s is at version v.
func advance(t testing.TB, s *paramserver.Server, v uint64, grad paramserver.Params) {
	t.Helper()
	for s.Version() < v {
		_, err := s.Apply(t.Context(), 0, grad, s.Version())
		require.NoError(t, err)
	}
}
