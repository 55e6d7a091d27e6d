// Package keys makes RSA keys under a lock, as an old module's test
// certificates are made: 512 bits, which GODEBUG's defaults allow up to
// go 1.23 (rsa1024min=0) and refuse from go 1.24.
package keys

import (
	"crypto/rand"
	"crypto/rsa"
	"sync"
)

var mu sync.Mutex

// Generate makes a key of the given size.
func Generate(bits int) (*rsa.PrivateKey, error) {
	mu.Lock()
	defer mu.Unlock()
	return rsa.GenerateKey(rand.Reader, bits)
}
