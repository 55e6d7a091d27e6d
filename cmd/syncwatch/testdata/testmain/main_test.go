package pair

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	fmt.Println("own TestMain: before")
	code := m.Run()
	fmt.Println("own TestMain: after")
	if os.Getenv("PAIR_EXIT") != "" {
		code = 3
	}
	os.Exit(code)
}

func TestAB(t *testing.T) { AB() }

func TestBA(t *testing.T) {
	if os.Getenv("PAIR_BA") != "" {
		BA()
	}
}
