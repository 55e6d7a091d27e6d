package kind_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/internal/kind"
)

// Reports name a primitive by its kind: the strings are lockorder's type
// names, as reports have always printed them.
func TestStringIsTheTypeName(t *testing.T) {
	want := map[kind.Kind]string{
		kind.Mutex: "Mutex", kind.RWMutex: "RWMutex", kind.Once: "Once",
		kind.WaitGroup: "WaitGroup", kind.Cond: "Cond",
	}
	assert.Len(t, kind.All(), len(want))
	for _, k := range kind.All() {
		assert.True(t, k.Valid(), "%d", k)
		assert.Equal(t, want[k], k.String())
	}
	var zero kind.Kind
	assert.False(t, zero.Valid())
	assert.Equal(t, "Kind(0)", zero.String())
	assert.Equal(t, "Kind(200)", kind.Kind(200).String())
}

// What each primitive guarantees, as the rules ask it.
func TestCapabilities(t *testing.T) {
	type caps struct{ lock, exclusive, readable, handsOff, initWrites, counts, writesHandOff bool }
	want := map[kind.Kind]caps{
		kind.Mutex:     {lock: true, exclusive: true, writesHandOff: true},
		kind.RWMutex:   {lock: true, exclusive: true, readable: true, handsOff: true, initWrites: true, writesHandOff: true},
		kind.Once:      {exclusive: true},
		kind.WaitGroup: {readable: true, counts: true},
		kind.Cond:      {},
		0:              {},
		200:            {},
	}
	for k, w := range want {
		got := caps{k.Lock(), k.Exclusive(), k.Readable(), k.HandsOff(), k.InitWrites(), k.Counts(), k.WritesHandOff()}
		assert.Equal(t, w, got, "%v", k)
	}
}

// A hold that may be handed off, or that counts, is a shared hold: no
// kind is both exclusive and counting, and only a readable kind hands
// read holds off.
func TestCapabilitiesAgree(t *testing.T) {
	for _, k := range kind.All() {
		assert.False(t, k.Exclusive() && k.Counts(), "%v", k)
		assert.False(t, k.HandsOff() && !k.Readable(), "%v", k)
		assert.False(t, k.InitWrites() && !k.Readable(), "%v", k)
		assert.False(t, k.WritesHandOff() && !k.Lock(), "%v", k) // only Unlock releases for another
	}
}
