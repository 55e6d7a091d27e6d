package etcd

import clientv3 "go.etcd.io/etcd/client/v3"

// LeaseOf returns the lease of rank, joined by b.
func LeaseOf(b *Barrier, rank int) clientv3.LeaseID { return b.g.member(rank).lease }

// ClockLeaseOf returns the lease of worker, joined by c.
func ClockLeaseOf(c *Clock, worker int) clientv3.LeaseID { return c.g.member(worker).lease }
