//go:build syncwatch_off

package lockorder

// What the shared files (config.go) call of the engine and the wait-for
// monitor, which this build does not have.

// installHooks has nothing to install: no internal package calls back.
func installHooks() {}

// forgetWriters has no writes to forget: nothing is checked.
func forgetWriters() {}

// applyMonitor has no monitor to configure in this build.
func applyMonitor(*config, uint32) {}
