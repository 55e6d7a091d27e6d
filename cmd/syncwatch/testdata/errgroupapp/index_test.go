package errgroupapp

import (
	"context"
	"testing"
)

func TestBuild(t *testing.T) {
	ix := &Index{docs: map[int]string{}, stats: map[string]int{}}
	if err := ix.Build(context.Background(), 8); err != nil {
		t.Fatal(err)
	}
}
