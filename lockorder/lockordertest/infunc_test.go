package lockordertest

import "testing"

func TestInFunc(t *testing.T) {
	for _, c := range []struct {
		fn, f string
		in    bool
	}{
		{"store.(*DB).get", "store.(*DB).get", true},
		{"store.(*DB).get.func1", "store.(*DB).get", true},
		{"store.(*DB).get.func2.1", "store.(*DB).get", true},
		{"store.(*DB).get.1", "store.(*DB).get", true}, // Go 1.27's closure names
		{"store.(*DB).get.2.1", "store.(*DB).get", true},
		{"store.(*DB).get.x", "store.(*DB).get", false},
		{"store.Get[...]", "store.Get", true},
		{"store.Get[...].func1", "store.Get", true},
		{"store.Map[...].Load", "store.Map", false},
		{"store.getAll", "store.get", false},
		{"store.(*DB).get.funcs", "store.(*DB).get", false},
		{"store.(*DB).get.func", "store.(*DB).get", false},
		{"", "", false},
	} {
		if got := inFunc(c.fn, c.f); got != c.in {
			t.Errorf("inFunc(%q, %q) = %v, want %v", c.fn, c.f, got, c.in)
		}
	}
}
