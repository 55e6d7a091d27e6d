package staleness

// A Policy is a staleness bound for gradients: how many versions behind the
// server a gradient may be computed and still be applied.
//
// The zero Policy is synchronous: only a gradient computed on the current
// version is accepted. A Policy is a value and safe for concurrent use.
type Policy struct {
	// MaxStaleness is the inclusive bound: a gradient computed on version
	// base is accepted at version current iff base <= current and
	// current-base <= MaxStaleness. Zero means synchronous (bulk
	// synchronous parallel); math.MaxUint64 accepts any past version.
	MaxStaleness uint64
}

// Check reports whether a gradient computed on version base may be applied
// when the server is at version current. It returns nil iff base <= current
// and the staleness current-base is at most p.MaxStaleness (the bound is
// inclusive, as in Petuum's SSP).
//
// Otherwise it returns a *[StaleError]: one that matches [ErrTooStale] if
// the gradient is older than the bound allows, or [ErrFutureVersion] if
// base is ahead of current, which no correct worker can have seen.
//
// Check never wraps around: the staleness is computed only when
// base <= current.
func (p Policy) Check(current, base uint64) error {
	if base > current {
		return &StaleError{Current: current, Base: base, Max: p.MaxStaleness}
	}
	if s := current - base; s > p.MaxStaleness {
		return &StaleError{Current: current, Base: base, Staleness: s, Max: p.MaxStaleness}
	}
	return nil
}
