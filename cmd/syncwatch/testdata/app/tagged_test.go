//go:build apptag

package app

import "testing"

func TestTagged(t *testing.T) { Tagged.RLock(); Tagged.RUnlock() }
