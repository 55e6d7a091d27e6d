package etcd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
)

var (
	errDeadline = context.DeadlineExceeded
	errCanceled = context.Canceled
)

// Await arrives at the barrier as rank, which this process joined, and
// waits until every rank, in every process, has arrived for the same
// generation, which it returns. As with barrier.Barrier, each call of a
// rank is for its next generation, so ranks never drift apart.
//
// The wait is bounded by ctx and by the barrier's timeout ([WithTimeout])
// counted from this rank's arrival. When either ends first, or a rank's
// lease expires (its process died or is cut off), or ranks arrive for
// different operations ([barrier.Op]), the generation breaks: one etcd
// transaction, comparing the generation's version, decides the verdict,
// and every rank of the generation, in every process, returns the same
// *barrier.BrokenError, with Missing and Why: for each missing rank, that
// its lease expired at T, or that it is alive and blocked in a syncwatch
// wait (on a lock held by goroutine N...), or alive elsewhere, last seen
// at generation S. Its Cause matches context.DeadlineExceeded,
// context.Canceled, [ErrLeaseExpired], [ErrRankLeft] or, for a
// collective mismatch, barrier.ErrCollectiveMismatch through a
// *barrier.MismatchError. A generation that completed before the end was
// noticed still succeeds. A rank arriving for a generation that broke
// without it gets its error at once.
//
// Deciding takes one transaction, bounded by [WithDecideTimeout], so
// Await returns at most that long after its bound. If etcd cannot be
// reached to arrive or to decide, Await returns a *[UnavailableError],
// which is not a verdict: the rank stays on the generation, and its next
// Await returns the verdict. Other errors: a *barrier.DuplicateArrivalError
// if rank is already waiting in another Await, a *[LeaseLostError] if
// this process lost the rank's lease. A rank not joined here, or a nil
// ctx, panics.
//
// As with barrier.Barrier, waiting while holding a lockorder lock is
// reported (barrier.KindLockHeld): a rank that needs the lock to arrive
// never will. The wait proceeds.
func (b *Barrier) Await(ctx context.Context, rank int, opts ...barrier.AwaitOption) (uint64, error) {
	if ctx == nil {
		panic("barrier/etcd: Await with nil Context")
	}
	g := b.g
	m := g.member(rank)
	g.mu.Lock()
	gen := m.next
	g.mu.Unlock()
	if !m.busy.CompareAndSwap(false, true) {
		return gen, &barrier.DuplicateArrivalError{Barrier: g.cfg.name, Rank: rank, Generation: gen}
	}
	defer m.busy.Store(false)
	select {
	case <-m.lost:
		return gen, &LeaseLostError{Barrier: g.cfg.name, Rank: rank}
	default:
	}
	gid := barrier.Goroutine()
	m.gid.Store(gid)
	if held := lockorder.HeldLocks(); len(held) > 0 {
		reportLockHeld(ctx, g.cfg.name, rank, gid, held)
	}
	end := barrier.BeginExternalWait(barrier.ExternalBarrier, g.cfg.name,
		"rank "+strconv.Itoa(rank)+", generation "+strconv.FormatUint(gen, 10))
	defer end()
	start := time.Now()
	w := &wait{b: b, m: m, gen: gen, op: barrier.OpOf(opts...), start: start, deadline: start.Add(g.cfg.timeout)}
	v, err := w.run(ctx)
	if v != nil {
		g.mu.Lock()
		m.next = gen + 1
		g.mu.Unlock()
	}
	return gen, err
}

// wait is one Await of one rank for one generation.
type wait struct {
	b        *Barrier
	m        *member
	gen      uint64
	op       string
	start    time.Time
	deadline time.Time
}

// arrival is what the arrival transaction found.
type arrival struct {
	rev     int64
	count   int64    // arrivals, this one included; -1 if unknown
	opSeen  string   // the generation's label, "" if none
	decided *verdict // the generation was already decided
	notKept bool     // the generation is older than the oldest kept
}

// run arrives and waits for the verdict. It returns the verdict if there
// is one (the rank then moves to the next generation) and the error to
// return.
func (w *wait) run(ctx context.Context) (*verdict, error) {
	actx, cancel := w.arrivalContext(ctx)
	a, err := w.arrive(actx)
	cancel()
	var lost *LeaseLostError
	if err != nil && !errors.As(err, &lost) && (ctx.Err() != nil || !time.Now().Before(w.deadline)) {
		// The wait ended while arriving, perhaps before the arrival went
		// through and before any rank opened the generation. Arrive again
		// (arriving twice counts once), bounded by the decide timeout
		// alone, as an arrival with ctx already done is: the generation
		// is then open, and the wait breaks it below unless this rank
		// was the last to arrive.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.b.g.cfg.decideTimeout)
		a, err = w.arrive(dctx)
		cancel()
	}
	if err != nil {
		if errors.As(err, &lost) {
			return nil, err
		}
		return nil, w.unavailable(err)
	}
	switch {
	case a.notKept:
		return w.notKept()
	case a.decided != nil:
		return w.finish(ctx, a.decided)
	}
	w.counted()
	last := a.count == int64(w.b.g.parties)
	// A label other than the generation's breaks it at once. The last
	// rank to arrive, if labels are in use, checks every arrival's label
	// before it decides the generation done: once every rank arrived,
	// the labels can no longer change.
	if (w.op != "" && a.opSeen != w.op) || (last && (a.opSeen != "" || w.op != "")) {
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.b.g.cfg.decideTimeout)
		m, err := w.mismatch(mctx)
		cancel()
		if err != nil {
			return nil, w.unavailable(err)
		}
		if m != nil {
			return w.breakFor(ctx, cause{kind: causeMismatch, text: m.Error(), by: w.m.rank, mismatch: m})
		}
	}
	if last {
		return w.decide(ctx, &verdict{State: stateDone, BrokenBy: -1})
	}
	if ctx.Err() != nil || !time.Now().Before(w.deadline) {
		return w.breakFor(ctx, w.endCause(ctx))
	}
	return w.waitVerdict(ctx, a.rev)
}

// arrivalContext bounds the arrival by ctx and the wait's deadline; if
// ctx is already done, by the decide timeout alone, so that, as in
// barrier.Barrier, the last rank to arrive completes the generation
// whatever its context.
func (w *wait) arrivalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() != nil {
		return context.WithTimeout(context.WithoutCancel(ctx), w.b.g.cfg.decideTimeout)
	}
	return context.WithDeadline(ctx, w.deadline)
}

// arrive records the rank's arrival for the generation in one
// transaction: if the rank still holds its lease and the generation is
// still kept, it opens the generation (if no one did) or joins it (if it
// is pending), sets the generation's label if it has none and the rank
// gives one, reads the label, and counts the arrivals; otherwise it
// reads why not. A label is so set and read atomically with the arrival:
// of two arrivals with different labels, the later one sees the earlier.
func (w *wait) arrive(ctx context.Context) (*arrival, error) {
	g, k, gen, r := w.b.g, w.b.g.k, w.gen, w.m.rank
	kg, ka, kop := k.gen(gen), k.arrival(gen, r), k.op(gen)
	put := clientv3.OpPut(ka, w.arrivalValue(), clientv3.WithLease(w.m.lease))
	count := clientv3.OpGet(k.arrivals(gen), clientv3.WithPrefix(), clientv3.WithCountOnly())
	label := clientv3.OpGet(kop)
	if w.op != "" {
		label = clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.Version(kop), "=", 0)},
			[]clientv3.Op{clientv3.OpPut(kop, w.op)}, []clientv3.Op{clientv3.OpGet(kop)})
	}
	pending := (&verdict{State: statePending, OpenedBy: r, BrokenBy: -1, At: time.Now()}).encode()
	open := []clientv3.Op{clientv3.OpPut(kg, pending), put, label, count}
	join := clientv3.OpTxn(
		[]clientv3.Cmp{clientv3.Compare(clientv3.Version(kg), "=", 1), clientv3.Compare(clientv3.CreateRevision(ka), "=", 0)},
		[]clientv3.Op{put, label, count},
		[]clientv3.Op{clientv3.OpGet(kg), label, count})
	resp, err := g.cli.Txn(ctx).If(
		clientv3.Compare(clientv3.LeaseValue(k.member(r)), "=", w.m.lease),
		clientv3.Compare(clientv3.Value(k.floor()), "<", padGen(gen+1)),
	).Then(clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.Version(kg), "=", 0)}, open, []clientv3.Op{join})).
		Else(clientv3.OpGet(k.floor()), clientv3.OpGet(k.member(r))).Commit()
	if err != nil {
		return nil, err
	}
	a := &arrival{rev: resp.Header.Revision, count: -1}
	if !resp.Succeeded {
		floor, member := resp.Responses[0].GetResponseRange().Kvs, resp.Responses[1].GetResponseRange().Kvs
		switch {
		case len(member) == 0 || member[0].Lease != int64(w.m.lease):
			return nil, &LeaseLostError{Barrier: g.cfg.name, Rank: r}
		case len(floor) == 0:
			return nil, fmt.Errorf("barrier/etcd: %s: the barrier's keys were deleted", k.prefix)
		}
		a.notKept = true
		return a, nil
	}
	inner := resp.Responses[0].GetResponseTxn()
	rs := inner.Responses
	if !inner.Succeeded { // not opened by this arrival
		jt := rs[0].GetResponseTxn()
		rs = jt.Responses
		if !jt.Succeeded {
			gkv := rs[0].GetResponseRange().Kvs
			if len(gkv) > 0 && gkv[0].Version >= 2 {
				v, err := decodeVerdict(gkv[0].Value)
				if err != nil {
					return nil, err
				}
				a.decided = v
				return a, nil
			}
			// Pending, and this rank had arrived already: an earlier
			// Await's arrival went through though it could not tell.
		}
		rs = rs[1:] // drop the put, or the read of the generation
	} else {
		rs = rs[2:] // drop the puts of the generation and the arrival
	}
	a.opSeen = w.labelSeen(rs[0])
	a.count = rs[1].GetResponseRange().Count
	return a, nil
}

// labelSeen returns the generation's label from the response to label's
// operation: the rank's own if it set it.
func (w *wait) labelSeen(r *etcdserverpb.ResponseOp) string {
	if t := r.GetResponseTxn(); t != nil {
		if t.Succeeded {
			return w.op
		}
		return valueOf(t.Responses[0].GetResponseRange().Kvs)
	}
	return valueOf(r.GetResponseRange().Kvs)
}

func valueOf(kvs []*mvccpb.KeyValue) string {
	if len(kvs) == 0 {
		return ""
	}
	return string(kvs[0].Value)
}

// arrivalRecord is the value of an arrival key: the rank's operation
// and its counts of collectives so far, this one included.
type arrivalRecord struct {
	Op     string            `json:"op,omitempty"`
	Counts []barrier.OpCount `json:"counts,omitempty"`
}

func (w *wait) arrivalValue() string {
	g := w.b.g
	g.mu.Lock()
	c := w.m.counts.Clone()
	if w.op != "" && w.m.countedGen != w.gen+1 {
		c.Add(w.op)
	}
	g.mu.Unlock()
	b, _ := json.Marshal(arrivalRecord{Op: w.op, Counts: c.Snapshot()})
	return string(b)
}

// counted records that the rank arrived for the generation and counts
// its operation, once.
func (w *wait) counted() {
	g := w.b.g
	g.mu.Lock()
	defer g.mu.Unlock()
	w.m.arrived = int64(w.gen)
	if w.op != "" && w.m.countedGen != w.gen+1 {
		w.m.counts.Add(w.op)
		w.m.countedGen = w.gen + 1
	}
}

// mismatch reads the generation's arrivals, in arrival order, and
// returns a *barrier.MismatchError if their labels differ, nil if not.
func (w *wait) mismatch(ctx context.Context) (*barrier.MismatchError, error) {
	resp, err := w.b.g.cli.Get(ctx, w.b.g.k.arrivals(w.gen), clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		return nil, err
	}
	var (
		ops    []barrier.RankOps
		labels = map[string]bool{}
	)
	for _, kv := range resp.Kvs {
		r, ok := rankOf(string(kv.Key), w.b.g.k.arrivals(w.gen))
		var rec arrivalRecord
		if !ok || json.Unmarshal(kv.Value, &rec) != nil {
			continue
		}
		ops = append(ops, barrier.RankOps{Rank: r, Op: rec.Op, Counts: rec.Counts})
		if rec.Op != "" {
			labels[rec.Op] = true
		}
	}
	if len(labels) < 2 {
		return nil, nil
	}
	return barrier.NewMismatchError(w.b.g.cfg.name, w.gen, ops), nil
}

func (w *wait) unavailable(err error) error {
	return &UnavailableError{Barrier: w.b.g.cfg.name, Rank: w.m.rank, Generation: w.gen, Err: err}
}

// notKept is the verdict of a generation older than those kept: it
// broke, long ago, without this rank, whose next call is for the one
// after it.
func (w *wait) notKept() (*verdict, error) {
	v := &verdict{State: stateBroken, Cause: causeNotKept, BrokenBy: -1, Missing: [][2]int{{w.m.rank, w.m.rank}},
		Text: fmt.Sprintf("generation %d was decided without rank %d and is no longer kept", w.gen, w.m.rank),
		Why:  []barrier.MissingRank{{Rank: w.m.rank, HolderRank: -1, Reason: "arrived after the generation's record was deleted"}}}
	return v, v.brokenError(w.b.g.cfg.name, w.gen, w.b.g.parties)
}
