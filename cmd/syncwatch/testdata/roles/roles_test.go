package roles

import "testing"

// Each test makes its own objects, as unit tests do.
func TestPut(t *testing.T)     { new(Store).Put() }
func TestReindex(t *testing.T) { new(Store).Reindex() }

func TestTree(t *testing.T) {
	root := &Outer{}
	leaf := &Outer{parent: &Inner{parent: root}}
	leaf.Report()
	root.Report()
}
