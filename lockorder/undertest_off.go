//go:build syncwatch_off

package lockorder

// underTest is false: this build has no mode to choose, and does not link
// the testing package to find out.
func underTest() bool { return false }
