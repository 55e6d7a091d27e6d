package class

// chainKeys are a lock's element in the chain cache's keys and the key of
// the one-lock chain, for write [0] and read [1] acquisitions. A Lock
// embeds them, and their methods are called on the Lock.
type chainKeys struct {
	elem  [2]uint64
	chain [2]uint64
}

// SetKeys records the lock's chain elements and one-lock chain keys for
// write and read acquisitions. It is called once, before the lock is shared.
func (k *chainKeys) SetKeys(elemW, chainW, elemR, chainR uint64) {
	k.elem = [2]uint64{elemW, elemR}
	k.chain = [2]uint64{chainW, chainR}
}

// Elem returns the chain element set by SetKeys.
func (k *chainKeys) Elem(read bool) uint64 {
	if read {
		return k.elem[1]
	}
	return k.elem[0]
}

// Chain returns the one-lock chain key set by SetKeys.
func (k *chainKeys) Chain(read bool) uint64 {
	if read {
		return k.chain[1]
	}
	return k.chain[0]
}
