package embedtestmain

import "testing"

func TestInc(t *testing.T) {
	var s S
	s.Inc()
	if s.n != 1 {
		t.Fatal(s.n)
	}
}
