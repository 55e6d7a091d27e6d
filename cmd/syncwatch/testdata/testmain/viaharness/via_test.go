package viaharness

import (
	"os"
	"testing"

	"example.com/testmain/harness"
)

func TestMain(m *testing.M) { harness.VerifyTestMain(m) }

func TestForward(t *testing.T) { Forward() }

func TestBackward(t *testing.T) {
	if os.Getenv("PAIR_BA") != "" {
		Backward()
	}
}
