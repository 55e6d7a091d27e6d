package etcd_test

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"

	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/barrier/etcd/embedded"
	"github.com/syncwatch/syncwatch/lockorder"
)

// server is the embedded etcd the tests share; each test works under a
// prefix of its own. Tests that stop or restart etcd start their own.
var server *embedded.Server

// TestMain starts the shared etcd in a temporary directory, keeps the
// reports of the generations the tests break on purpose off standard
// error, and fails the run if goroutines leaked once etcd is stopped.
func TestMain(m *testing.M) {
	lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))
	dir, err := os.MkdirTemp("", "syncwatch-etcd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server, err = embedded.Start(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	server.Close()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(leakOptions()...); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// leakOptions ignores the goroutines etcd's server and client leave
// behind on purpose (their loggers' and gRPC's background workers).
func leakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreTopFunction("github.com/golang/glog.(*fileSink).flushDaemon"),
		goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.NewCallbackSerializer.func1"),
		goleak.IgnoreAnyFunction("go.etcd.io/etcd/pkg/v3/traceutil.init"),
		goleak.IgnoreTopFunction("time.Sleep"),
	}
}

var prefixes atomic.Int64

// prefix returns a key prefix no other test uses.
func prefix(t *testing.T) string {
	return fmt.Sprintf("/syncwatch-test/%s/%d/", t.Name(), prefixes.Add(1))
}

// client returns a client of srv, closed when t ends.
func client(t *testing.T, srv *embedded.Server) *clientv3.Client {
	t.Helper()
	cli, err := srv.Client()
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	return cli
}

// requireClean fails t if anything is left under p.
func requireClean(t *testing.T, cli *clientv3.Client, p string) {
	t.Helper()
	resp, err := cli.Get(t.Context(), p, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	require.NoError(t, err)
	var keys []string
	for _, kv := range resp.Kvs {
		keys = append(keys, string(kv.Key))
	}
	require.Empty(t, keys, "keys left under %s", p)
}

// brokenOf returns err as a *barrier.BrokenError, failing t if it is not.
func brokenOf(t *testing.T, err error) *barrier.BrokenError {
	t.Helper()
	var be *barrier.BrokenError
	require.ErrorAs(t, err, &be)
	return be
}

// within is a generous limit on how long a bounded wait may take: the
// tests check that waits end by their bound structurally (the error is a
// verdict or a deadline); this only catches waits that hang.
func within(bound time.Duration) time.Duration { return 3*bound + 10*time.Second }
