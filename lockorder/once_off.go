//go:build syncwatch_off

package lockorder

import "sync"

// Once is a sync.Once; the syncwatch_off build tag removed the checks.
type Once struct{ o sync.Once }

// Do calls f if and only if Do is being called for the first time.
func (o *Once) Do(f func()) { o.o.Do(f) }
