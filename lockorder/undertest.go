//go:build !syncwatch_off

package lockorder

import "testing"

// underTest reports whether the program is a test binary, where the
// default mode is ModeCheck. (The syncwatch_off build has a single mode,
// and does not link the testing package.)
func underTest() bool { return testing.Testing() }
