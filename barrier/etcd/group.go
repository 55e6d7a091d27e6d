package etcd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/syncwatch/syncwatch/barrier"
)

// A group is what a Barrier and a Clock share: this process's members
// (the ranks it joined, each with a lease and a key), its view of every
// rank's key from one watch on P/c/ in revision order, and the answers it
// gives when asked what its missing ranks are doing.
type group struct {
	cli     *clientv3.Client
	k       keys
	cfg     config
	parties int
	kind    barrier.ExternalKind
	// settings are what every rank must share, checked at Join; set by
	// NewBarrier and NewClock.
	settings Settings
	host     string
	pid      int
	handle   string // this handle's own id among those of one process
	// needsAnswer says whether a local member is one an ask is about
	// (a rank missing from the generation asked about, a worker behind
	// the clock asked for). Called with mu held.
	needsAnswer func(m *member, ask string) bool
	// step is what a member's answer gives as its last position. Called
	// with mu held.
	step func(m *member) int64

	mu      sync.Mutex
	members map[int]*member // joined here
	view    map[int]*peer   // every rank's key as last seen
	lastAsk string
	changed chan struct{} // closed and replaced on every change of view
	started bool
	closed  bool
	stop    context.CancelFunc
	done    sync.WaitGroup
	asks    chan string // to the answerer; holds the latest ask only
}

// peer is what this process knows of one rank's key.
type peer struct {
	state  memberState
	seenAt time.Time // when this process received state
	gone   bool      // the key was deleted
	goneAt time.Time
	left   bool // gone after closing its handle, or a clock worker's Leave
}

// memberState is the value of a member key.
type memberState struct {
	PID  int    `json:"pid"`
	Host string `json:"host"`
	// Handle identifies the barrier handle (and so the etcd client) the
	// rank joined through: ranks of one handle live and die together.
	Handle  string `json:"handle,omitempty"`
	Lease   int64  `json:"lease"`
	Clock   uint64 `json:"clock,omitempty"`
	Closing bool   `json:"closing,omitempty"`
	// Answer is the latest answer to an ask.
	Answer *answer `json:"answer,omitempty"`
}

// answer is what a rank said it was doing, when asked.
type answer struct {
	Ask        string        `json:"ask"`
	Goroutine  int64         `json:"goroutine,omitempty"`
	Waiting    bool          `json:"waiting,omitempty"`
	Kind       string        `json:"kind,omitempty"`
	WaitingFor string        `json:"waitingFor,omitempty"`
	Holder     int64         `json:"holder,omitempty"`
	HolderRank int           `json:"holderRank"`
	Reason     string        `json:"reason,omitempty"`
	State      string        `json:"state,omitempty"`
	Step       int64         `json:"step"`
	RenewedAgo time.Duration `json:"renewedAgo"`
	// Blocked, for a member that never arrived at a barrier and is in no
	// syncwatch wait, names the goroutines of its process blocked on a
	// lock held by a member waiting at the barrier (see
	// barrier.ExplainBlockedOnWaiters).
	Blocked string `json:"blocked,omitempty"`
}

// A member is a rank joined by this process: its lease, kept alive, and
// its position. The fields after gid are guarded by group.mu.
type member struct {
	rank      int
	lease     clientv3.LeaseID
	kaCancel  context.CancelFunc
	lost      chan struct{} // closed when the lease's keep-alive ends
	lastRenew atomic.Int64  // UnixNano of the latest renewal
	busy      atomic.Bool   // an Await or Advance is running
	gid       atomic.Int64  // goroutine of the latest Await or Advance

	next    uint64 // barrier: the generation of the next Await
	arrived int64  // barrier: the last generation arrived for, -1 if none
	clock   uint64 // clock: the worker's clock
	counts  barrier.OpCounts
	// countedGen is one past the generation whose operation counts has
	// counted, so that an Await arriving again counts it once.
	countedGen uint64
	closing    bool
}

func newGroup(cli *clientv3.Client, prefix string, parties int, kind barrier.ExternalKind, opts []Option) *group {
	if cli == nil {
		panic("barrier/etcd: nil client")
	}
	if parties < 1 {
		panic(fmt.Sprintf("barrier/etcd: %d parties, want at least 1", parties))
	}
	host, _ := os.Hostname()
	return &group{
		cli: cli, k: newKeys(prefix), cfg: newConfig(prefix, opts), parties: parties, kind: kind,
		host: host, pid: os.Getpid(), handle: strconv.FormatUint(rand.Uint64(), 36),
		members: map[int]*member{}, view: map[int]*peer{},
		changed: make(chan struct{}), asks: make(chan string, 1),
	}
}

func (g *group) checkRank(r int) {
	if r < 0 || r >= g.parties {
		panic(fmt.Sprintf("barrier/etcd: rank %d out of range [0, %d)", r, g.parties))
	}
}

// member returns the joined member r; not joined panics.
func (g *group) member(r int) *member {
	g.checkRank(r)
	g.mu.Lock()
	m, closed := g.members[r], g.closed
	g.mu.Unlock()
	if closed {
		panic("barrier/etcd: use of a closed handle")
	}
	if m == nil {
		panic(fmt.Sprintf("barrier/etcd: rank %d not joined in this process", r))
	}
	return m
}

func (g *group) state(m *member, closing bool) string {
	b, _ := json.Marshal(memberState{PID: g.pid, Host: g.host, Handle: g.handle, Lease: int64(m.lease), Clock: m.clock, Closing: closing})
	return string(b)
}

// join grants rank r a lease, takes its key if no other process holds
// it, and keeps the lease alive. init adds operations to the transaction
// that takes the key (creating shared keys).
func (g *group) join(ctx context.Context, r int, init []clientv3.Op) (*member, error) {
	g.checkRank(r)
	if err := g.startWatch(ctx); err != nil {
		return nil, err
	}
	g.mu.Lock()
	if g.members[r] != nil || g.closed {
		g.mu.Unlock()
		panic(fmt.Sprintf("barrier/etcd: rank %d already joined, or the handle is closed", r))
	}
	g.mu.Unlock()
	settled, err := g.settle(ctx, r)
	if err != nil {
		return nil, err
	}
	lease, err := g.cli.Grant(ctx, g.cfg.ttlSeconds())
	if err != nil {
		return nil, fmt.Errorf("barrier/etcd: grant lease: %w", err)
	}
	m := &member{rank: r, lease: lease.ID, lost: make(chan struct{}), arrived: -1}
	m.gid.Store(barrier.Goroutine()) // until its first call, the rank is the joiner's
	key := g.k.member(r)
	then := append([]clientv3.Op{clientv3.OpPut(key, g.state(m, false), clientv3.WithLease(lease.ID))}, init...)
	var resp *clientv3.TxnResponse
	for try := 1; ; try++ {
		// The settings compared are those settle read: if the barrier's
		// keys were deleted and made anew since, settle again.
		resp, err = g.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0),
			clientv3.Compare(clientv3.CreateRevision(g.k.settings()), "=", settled)).
			Then(then...).Else(clientv3.OpGet(key)).Commit()
		if err != nil || resp.Succeeded || len(resp.Responses[0].GetResponseRange().Kvs) > 0 {
			break
		}
		if try == maxSettle {
			err = fmt.Errorf("barrier/etcd: %s: the settings changed %d times while rank %d joined", g.k.settings(), try, r)
			break
		}
		if settled, err = g.settle(ctx, r); err != nil {
			break
		}
	}
	if err == nil && !resp.Succeeded {
		holder := "another process"
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			var st memberState
			if json.Unmarshal(kvs[0].Value, &st) == nil {
				holder = fmt.Sprintf("pid %d on %s", st.PID, st.Host)
			}
		}
		err = &RankTakenError{Barrier: g.cfg.name, Rank: r, Holder: holder}
	}
	if err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.cfg.decideTimeout)
		g.cli.Revoke(rctx, lease.ID) //nolint:errcheck // the lease expires anyway
		cancel()
		return nil, err
	}
	kaCtx, kaCancel := context.WithCancel(context.Background())
	ka, err := g.cli.KeepAlive(kaCtx, lease.ID)
	if err != nil {
		kaCancel()
		return nil, fmt.Errorf("barrier/etcd: keep lease alive: %w", err)
	}
	m.kaCancel = kaCancel
	m.lastRenew.Store(time.Now().UnixNano())
	g.done.Add(1)
	go g.keepAlive(kaCtx, m, ka)
	g.mu.Lock()
	g.members[r] = m
	g.mu.Unlock()
	return m, nil
}

// keepAlive drains m's keep-alive responses until ctx ends or the lease
// is gone. The client gives up a keep-alive it could not renew for a
// TTL (etcd unreachable); the lease may still be alive on the server,
// which extends every lease when it restarts: keepAlive then asks etcd
// for the lease, and keeps it alive again if it is still there. m.lost is
// closed only once etcd says the lease is gone, or ctx ends.
func (g *group) keepAlive(ctx context.Context, m *member, ka <-chan *clientv3.LeaseKeepAliveResponse) {
	defer g.done.Done()
	defer close(m.lost)
	for {
		for range ka {
			m.lastRenew.Store(time.Now().UnixNano())
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
			if g.cli.Ctx().Err() != nil {
				return // the client is closed: the lease will expire
			}
			tctx, cancel := context.WithTimeout(ctx, time.Second)
			ttl, err := g.cli.TimeToLive(tctx, m.lease)
			cancel()
			if err != nil {
				continue // etcd unreachable: the lease may live
			}
			if ttl.TTL <= 0 {
				return // gone
			}
			if ka, err = g.cli.KeepAlive(ctx, m.lease); err == nil {
				break
			}
		}
	}
}

// startWatch reads P/c/ once and starts watching it, with the answerer,
// if they are not running.
func (g *group) startWatch(ctx context.Context) error {
	g.mu.Lock()
	started := g.started
	g.mu.Unlock()
	if started {
		return nil
	}
	rev, err := g.resync(ctx)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started {
		return nil
	}
	wctx, stop := context.WithCancel(context.Background())
	g.started, g.stop = true, stop
	g.done.Add(2)
	go g.watch(wctx, rev)
	go g.answerer(wctx)
	return nil
}

// resync reads every key under P/c/ into the view and returns the
// revision read at. Ranks in the view whose key is gone are marked gone.
// It reads with no lock held, so that a slow etcd never holds up a wait.
func (g *group) resync(ctx context.Context) (int64, error) {
	resp, err := g.cli.Get(ctx, g.k.control(), clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("barrier/etcd: read %s: %w", g.k.control(), err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	present := map[int]bool{}
	for _, kv := range resp.Kvs {
		if r, ok := rankOf(string(kv.Key), g.k.members()); ok {
			present[r] = true
		}
		g.applyLocked(mvccpb.PUT, kv, nil, now)
	}
	for r, p := range g.view {
		if !present[r] && !p.gone {
			g.goneLocked(p, p.state.Closing, now)
		}
	}
	g.broadcastLocked()
	return resp.Header.Revision, nil
}

// watch follows P/c/ from rev on, in revision order, until ctx ends. If
// the watch fails (etcd compacted the revisions it needs, or it was
// cancelled), it reads P/c/ again and watches from there.
func (g *group) watch(ctx context.Context, rev int64) {
	defer g.done.Done()
	for ctx.Err() == nil {
		wch := g.cli.Watch(clientv3.WithRequireLeader(ctx), g.k.control(),
			clientv3.WithPrefix(), clientv3.WithRev(rev+1), clientv3.WithPrevKV())
		for resp := range wch {
			if resp.Canceled || resp.Err() != nil {
				break
			}
			g.mu.Lock()
			now := time.Now()
			for _, ev := range resp.Events {
				g.applyLocked(ev.Type, ev.Kv, ev.PrevKv, now)
			}
			if len(resp.Events) > 0 {
				g.broadcastLocked()
			}
			g.mu.Unlock()
			rev = max(rev, resp.Header.Revision)
		}
		for ctx.Err() == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			rctx, cancel := context.WithTimeout(ctx, g.cfg.decideTimeout)
			r, err := g.resync(rctx)
			cancel()
			if err == nil {
				rev = r
				break
			}
		}
	}
}

// applyLocked applies one key's change to the view.
func (g *group) applyLocked(t mvccpb.Event_EventType, kv, prev *mvccpb.KeyValue, now time.Time) {
	key := string(kv.Key)
	if key == g.k.ask() {
		if t == mvccpb.PUT && string(kv.Value) > g.lastAsk {
			g.lastAsk = string(kv.Value)
			select {
			case g.asks <- g.lastAsk:
			default:
				select { // replace the pending ask by the latest
				case <-g.asks:
				default:
				}
				select {
				case g.asks <- g.lastAsk:
				default:
				}
			}
		}
		return
	}
	if r, ok := rankOf(key, g.k.lefts()); ok && r < g.parties {
		if t == mvccpb.PUT {
			g.peer(r).left = true
		}
		return
	}
	r, ok := rankOf(key, g.k.members())
	if !ok || r >= g.parties {
		return
	}
	p := g.peer(r)
	if t == mvccpb.DELETE {
		if prev != nil {
			json.Unmarshal(prev.Value, &p.state) //nolint:errcheck // a bad value keeps the last good one
		}
		g.goneLocked(p, p.state.Closing, now)
		return
	}
	var st memberState
	if json.Unmarshal(kv.Value, &st) == nil {
		p.state, p.seenAt, p.gone, p.left = st, now, false, false
	}
}

func (g *group) peer(r int) *peer {
	p := g.view[r]
	if p == nil {
		p = &peer{}
		g.view[r] = p
	}
	return p
}

func (g *group) goneLocked(p *peer, closed bool, now time.Time) {
	p.gone, p.goneAt = true, now
	if closed {
		p.left = true
	}
}

func (g *group) broadcastLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// changes returns a channel closed at the next change of the view.
func (g *group) changes() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changed
}

// close revokes the leases of the members joined here (deleting their
// keys: a rank that closes is seen as gone by the others), stops the
// watch, and, if no rank of the barrier is left in etcd, deletes every
// key under the prefix. It is bounded by the decide timeout.
func (g *group) close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	ms := make([]*member, 0, len(g.members))
	for _, m := range g.members {
		m.closing = true
		ms = append(ms, m)
	}
	g.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.decideTimeout)
	defer cancel()
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("barrier/etcd: close %s: %w", g.cfg.name, err)
		}
	}
	for _, m := range ms {
		// Say so first, so that the others tell a rank that left from
		// one whose process died.
		key := g.k.member(m.rank)
		_, err := g.cli.Txn(ctx).If(clientv3.Compare(clientv3.LeaseValue(key), "=", m.lease)).
			Then(clientv3.OpPut(key, g.state(m, true), clientv3.WithLease(m.lease))).Commit()
		keep(err)
		m.kaCancel()
		if _, err = g.cli.Revoke(ctx, m.lease); !errors.Is(err, rpctypes.ErrLeaseNotFound) {
			keep(err)
		}
	}
	if len(ms) > 0 {
		resp, err := g.cli.Get(ctx, g.k.members(), clientv3.WithPrefix(), clientv3.WithCountOnly())
		keep(err)
		if err == nil && resp.Count == 0 {
			_, err = g.cli.Delete(ctx, g.k.prefix, clientv3.WithPrefix())
			keep(err)
		}
	}
	g.mu.Lock()
	if g.stop != nil {
		g.stop()
	}
	g.mu.Unlock()
	g.done.Wait()
	return firstErr
}
