package app

import "testing"

func TestOuter(t *testing.T) { Outer() }

func TestInner(t *testing.T) { Inner() }

func TestBump(t *testing.T) {
	if Bump() != 1 {
		t.Fatal("Bump")
	}
}
