package harness

import "testing"

func direct(m *testing.M) int { return m.Run() }

func TestMain(m *testing.M) {
	_ = direct(m)
	VerifyTestMain(m, 1)
}
