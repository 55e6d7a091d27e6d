package etcd

import (
	"context"
	"encoding/json"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Settings are what every rank of a barrier, or every worker of a clock,
// must agree on: with another party count, a rank would complete a
// generation the others are still waiting for. The first Join under a
// prefix records them in etcd (P/settings); every later Join, in any
// process, compares its own with them and, if they differ, fails with a
// *[SettingsMismatchError] and takes nothing. Bounds that each process
// may set for itself (the timeout, lease TTL, decide timeout and name)
// are not settings.
type Settings struct {
	// Kind is "barrier" or "clock": the two cannot share a prefix.
	Kind string `json:"kind"`
	// Parties is the number of ranks of a barrier, or of workers of a
	// clock.
	Parties int `json:"parties"`
	// History is a barrier's [WithHistory]: how many decided generations
	// its ranks keep, and so delete.
	History int `json:"history,omitempty"`
	// MaxSkew is a clock's maxSkew.
	MaxSkew uint64 `json:"maxSkew,omitempty"`
}

// settingsRecord is the value of P/settings: the settings and who
// recorded them.
type settingsRecord struct {
	Settings
	Rank int    `json:"rank"`
	PID  int    `json:"pid"`
	Host string `json:"host"`
}

// by describes who recorded r: "rank 0 (pid 4242 on host-a)".
func (r settingsRecord) by() string {
	return fmt.Sprintf("rank %d (pid %d on %s)", r.Rank, r.PID, r.Host)
}

// maxSettle bounds how often a Join records or reads the settings again
// because the barrier's keys were deleted (its last rank closed) and made
// anew between the reading and the joining.
const maxSettle = 3

// settle records g's settings under the prefix if nobody did, or reads
// those recorded, for rank r about to join, in one transaction: the key
// is created once and never changed while it exists, so every Join
// compares with the same record. It returns the key's create revision,
// which the joining transaction compares, or a *SettingsMismatchError if
// the record differs from g's settings.
func (g *group) settle(ctx context.Context, r int) (int64, error) {
	key := g.k.settings()
	b, err := json.Marshal(settingsRecord{Settings: g.settings, Rank: r, PID: g.pid, Host: g.host})
	if err != nil {
		panic(fmt.Sprintf("barrier/etcd: encode settings: %v", err))
	}
	resp, err := g.cli.Txn(ctx).If(clientv3.Compare(clientv3.Version(key), "=", 0)).
		Then(clientv3.OpPut(key, string(b))).Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return 0, fmt.Errorf("barrier/etcd: record settings: %w", err)
	}
	if resp.Succeeded {
		return resp.Header.Revision, nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 { // deleted since the compare: impossible in one transaction
		return 0, fmt.Errorf("barrier/etcd: %s: no settings recorded", key)
	}
	var rec settingsRecord
	if err := json.Unmarshal(kvs[0].Value, &rec); err != nil {
		return 0, fmt.Errorf("barrier/etcd: bad settings %q at %s: %w", kvs[0].Value, key, err)
	}
	if rec.Settings != g.settings {
		return 0, &SettingsMismatchError{Barrier: g.cfg.name, Rank: r, Given: g.settings, Recorded: rec.Settings, RecordedBy: rec.by()}
	}
	return kvs[0].CreateRevision, nil
}
