package tm

import (
	"os"
	"sync"
	"testing"
)

var mu sync.Mutex

func TestMain(m *testing.M) {
	mu.Lock()
	mu.Unlock()
	if code := m.Run(); code != 0 {
		os.Exit(code)
	}
	os.Exit(0)
}
