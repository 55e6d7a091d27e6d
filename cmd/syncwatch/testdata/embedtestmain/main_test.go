package embedtestmain

import (
	_ "embed"
	"os"
	"testing"
)

//go:embed main_test.go
var self string

func TestMain(m *testing.M) {
	os.Exit(m.Run())
}

func TestSelf(t *testing.T) {
	b, _ := os.ReadFile("main_test.go")
	if string(b) != self {
		t.Fatal("differs")
	}
}
