package embedself

import (
	_ "embed"
	"os"
	"testing"
)

//go:embed store.go
var storeSource []byte

// The embedded copy of store.go is the file's own bytes.
func TestEmbeddedSourceIsTheFile(t *testing.T) {
	onDisk, err := os.ReadFile("store.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(onDisk) != string(storeSource) {
		t.Fatalf("embedded store.go has %d bytes, the file %d", len(storeSource), len(onDisk))
	}
}

func TestCounter(t *testing.T) {
	var c Counter
	c.Inc()
	if c.n != 1 || c.s.n != 1 {
		t.Fatalf("counts %d, %d", c.n, c.s.n)
	}
}
