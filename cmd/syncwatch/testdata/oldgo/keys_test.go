package keys

import "testing"

func TestSmallKeyUnderOldDefaults(t *testing.T) {
	if _, err := Generate(512); err != nil {
		t.Fatal(err)
	}
}
