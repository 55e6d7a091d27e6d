// Package embedded runs a single-node etcd server inside the process, on
// loopback ports, with its data in a directory of the caller's: the
// default for barrier/etcd's tests, examples and demo, so that nothing
// needs to be installed. Programs that coordinate real processes point
// barrier/etcd at a real cluster instead.
//
// The server is tuned for tests, not for keeping data: it does not fsync,
// its heartbeat is 50ms and its election timeout 500ms (so leases of one
// second are allowed and a restart elects itself quickly), and it logs
// nothing.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// StartTimeout bounds how long [Start] and [Server.Restart] wait for the
// server to be ready.
const StartTimeout = 30 * time.Second

// A Server is an embedded single-node etcd. Its methods are safe for
// concurrent use.
type Server struct {
	dir          string
	client, peer url.URL

	mu sync.Mutex
	e  *embed.Etcd // nil while stopped
}

// Start starts a server with its data in dir, listening for clients and
// its peer on free loopback ports, and waits until it is ready (at most
// [StartTimeout]).
func Start(dir string) (*Server, error) {
	var lastErr error
	for range 3 { // a free port can be taken between finding and binding it
		ports, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		s := &Server{
			dir:    dir,
			client: url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[0])},
			peer:   url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[1])},
		}
		if lastErr = s.start(); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

// Endpoints returns the client URLs, for clientv3.Config.Endpoints.
func (s *Server) Endpoints() []string { return []string{s.client.String()} }

// Client returns a new client of the server. The caller closes it.
//
// Its connection is retried at most every 250ms after a failure, instead
// of gRPC's default backoff of up to two minutes, so that a client
// reconnects within a lease's TTL once a restarted server is back.
// Clients of a real cluster want the same (see [DialOptions]).
func (s *Server) Client() (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   s.Endpoints(),
		DialTimeout: 5 * time.Second,
		DialOptions: DialOptions(),
		Logger:      zap.NewNop(),
	})
}

// DialOptions returns gRPC dial options for clientv3.Config.DialOptions
// that retry a lost connection at most every 250ms, so that a client
// notices a restarted etcd well within a lease's TTL.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 250 * time.Millisecond},
		MinConnectTimeout: time.Second,
	})}
}

// Stop stops the server, keeping its data, so that [Server.Restart]
// brings it back on the same ports. Clients see it as unreachable
// meanwhile. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	e := s.e
	s.e = nil
	s.mu.Unlock()
	if e != nil {
		e.Close()
	}
}

// Restart starts a stopped server again, with its data, on the same
// ports. Restarting a running server returns an error.
func (s *Server) Restart() error {
	return s.start()
}

// Close stops the server for good. Its data stays in its directory.
func (s *Server) Close() { s.Stop() }

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.e != nil {
		return errors.New("embedded: server is running")
	}
	cfg := embed.NewConfig()
	cfg.Name = "syncwatch"
	cfg.Dir = s.dir
	cfg.ListenClientUrls = []url.URL{s.client}
	cfg.AdvertiseClientUrls = []url.URL{s.client}
	cfg.ListenPeerUrls = []url.URL{s.peer}
	cfg.AdvertisePeerUrls = []url.URL{s.peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.TickMs, cfg.ElectionMs = 50, 500
	cfg.UnsafeNoFsync = true
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("embedded: start etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return fmt.Errorf("embedded: etcd failed: %w", err)
	case <-time.After(StartTimeout):
		e.Close()
		return fmt.Errorf("embedded: etcd not ready after %v", StartTimeout)
	}
	s.e = e
	return nil
}

// freePorts returns n loopback TCP ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var (
		ports []int
		ls    []net.Listener
	)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("embedded: find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
