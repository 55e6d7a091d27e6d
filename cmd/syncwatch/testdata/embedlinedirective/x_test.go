package embedlinedirective

import (
	_ "embed"
	"testing"
)

//go:embed parser.go
var src string

func TestX(t *testing.T) { A() }
