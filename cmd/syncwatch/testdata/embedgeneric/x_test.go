package embedgeneric

import (
	_ "embed"
	"testing"
)

//go:embed frozen.go
var src string

func TestAB(t *testing.T) { A(); B() }
