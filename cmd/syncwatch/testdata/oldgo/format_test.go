package keys

import "testing"

// A message used as a format string: vet's printf check reports that only
// in files of Go 1.24 or newer, so go test passes on this module.
func TestMessageAsFormat(t *testing.T) {
	msg := "100% done"
	if msg == "" {
		t.Errorf(msg)
	}
}
