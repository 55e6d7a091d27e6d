package embedonlytest

import (
	_ "embed"
	"testing"
)

//go:embed x_test.go
var self string

func TestInv(t *testing.T) { AB(); BA() }
