package etcd

import (
	"context"
	"fmt"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/syncwatch/syncwatch/barrier"
)

// A Barrier is one process's handle on a barrier of parties ranks whose
// state lives in etcd under a key prefix, so that ranks in many processes
// on many machines meet at it. It keeps the contract of barrier.Barrier:
// generations numbered from 0, every wait bounded, a generation that
// breaks breaks for every rank in every process with the same
// *barrier.BrokenError, and generations never cross.
//
// A process joins the ranks it runs ([Barrier.Join]), then calls
// [Barrier.Await] for them; [Barrier.Close] leaves. Every process of a
// barrier must give the same prefix, parties and options: the party count
// and history are checked at Join (see [Settings]). Use a fresh
// prefix for each run of a job: the prefix is the barrier's identity.
//
// A Barrier is safe for use by many goroutines; each rank waits in one
// Await at a time. Create it with [NewBarrier]; the zero Barrier is not
// usable.
type Barrier struct {
	g *group

	mu       sync.Mutex
	reported []uint64 // the broken generations reported from this process, the latest last
}

// NewBarrier returns a handle on the barrier of parties ranks stored
// under prefix, through cli. It does no I/O: [Barrier.Join] does. Fewer
// than one party, an empty prefix or a nil client panics.
func NewBarrier(cli *clientv3.Client, prefix string, parties int, opts ...Option) *Barrier {
	b := &Barrier{g: newGroup(cli, prefix, parties, barrier.ExternalBarrier, opts)}
	b.g.settings = Settings{Kind: "barrier", Parties: parties, History: b.g.cfg.history}
	b.g.needsAnswer = func(m *member, ask string) bool {
		gen := askPos(ask)
		return m.arrived < int64(gen) && m.next <= gen
	}
	b.g.step = func(m *member) int64 { return m.arrived }
	return b
}

// Name returns the barrier's name (see [WithName]).
func (b *Barrier) Name() string { return b.g.cfg.name }

// Parties returns the number of ranks.
func (b *Barrier) Parties() int { return b.g.parties }

// Join makes this process rank's holder: it grants the rank a lease,
// which it keeps alive, and creates the rank's key under it, so that the
// other processes see the rank die if this process dies or is cut off
// from etcd (for longer than [WithLeaseTTL]). The rank's first Await is
// for the barrier's current generation: the oldest one not yet decided.
//
// Join returns a *[RankTakenError] if another process holds the rank,
// and a *[SettingsMismatchError] if this handle's [Settings] (its party
// count, its history) differ from those the barrier's first Join
// recorded; either way the rank is not joined. A rank out of range, or
// joined twice, panics.
func (b *Barrier) Join(ctx context.Context, rank int) error {
	k := b.g.k
	init := []clientv3.Op{
		clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.Version(k.floor()), "=", 0)},
			[]clientv3.Op{clientv3.OpPut(k.floor(), padGen(0))}, nil),
		clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.Version(k.ask()), "=", 0)},
			[]clientv3.Op{clientv3.OpPut(k.ask(), "")}, nil),
	}
	m, err := b.g.join(ctx, rank, init)
	if err != nil {
		return err
	}
	start, err := b.current(ctx)
	if err != nil {
		b.g.mu.Lock()
		delete(b.g.members, rank)
		b.g.mu.Unlock()
		m.kaCancel()
		b.g.cli.Revoke(context.WithoutCancel(ctx), m.lease) //nolint:errcheck // it expires anyway
		return err
	}
	b.g.mu.Lock()
	m.next = start
	b.g.mu.Unlock()
	return nil
}

// current returns the barrier's current generation: the newest one if it
// is pending, the one after it if it is decided, 0 if there is none.
func (b *Barrier) current(ctx context.Context) (uint64, error) {
	resp, err := b.g.cli.Get(ctx, b.g.k.gens(), append(clientv3.WithLastKey(), clientv3.WithKeysOnly())...)
	if err != nil {
		return 0, fmt.Errorf("barrier/etcd: read generations: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return 0, nil
	}
	gen, ok := b.g.k.genOf(string(resp.Kvs[0].Key))
	if !ok {
		return 0, nil
	}
	v, err := b.g.cli.Get(ctx, b.g.k.gen(gen))
	if err != nil {
		return 0, fmt.Errorf("barrier/etcd: read generation %d: %w", gen, err)
	}
	if len(v.Kvs) > 0 && v.Kvs[0].Version >= 2 {
		return gen + 1, nil
	}
	return gen, nil
}

// Close leaves the barrier: it revokes the leases of the ranks joined
// here, which deletes their keys (the other processes see these ranks
// leave, and a generation waiting for them breaks), and stops watching.
// If no rank of the barrier remains in etcd, it deletes every key under
// the prefix. Close waits at most the decide timeout for etcd. Awaits
// after Close panic; closing twice does nothing.
func (b *Barrier) Close() error { return b.g.close() }

// report hands a broken generation to lockorder's pipeline, once per
// generation in this process.
func (b *Barrier) report(ctx context.Context, be *barrier.BrokenError) {
	b.mu.Lock()
	for _, g := range b.reported {
		if g == be.Generation {
			b.mu.Unlock()
			return
		}
	}
	if len(b.reported) == maxReported {
		b.reported = b.reported[1:]
	}
	b.reported = append(b.reported, be.Generation)
	b.mu.Unlock()
	reportBroken(ctx, be)
}

// maxReported bounds the generations a Barrier remembers having reported.
const maxReported = 64
