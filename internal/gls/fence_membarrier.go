//go:build linux && (amd64 || arm64)

package gls

import "syscall"

// Linux's membarrier(2) commands (include/uapi/linux/membarrier.h).
const (
	membarrierQuery                    = 0
	membarrierPrivateExpedited         = 1 << 3
	membarrierRegisterPrivateExpedited = 1 << 4
)

// registerMembarrier asks the kernel for the expedited private barrier and
// registers the process for it, reporting whether it may be used (Linux
// 4.14 and later; sandboxes may refuse it).
func registerMembarrier() bool {
	cmds, _, errno := syscall.Syscall(sysMembarrier, membarrierQuery, 0, 0)
	if errno != 0 || cmds&membarrierPrivateExpedited == 0 {
		return false
	}
	_, _, errno = syscall.Syscall(sysMembarrier, membarrierRegisterPrivateExpedited, 0, 0)
	return errno == 0
}

// membarrier runs a full memory barrier on every processor running a
// thread of the process, and reports whether it did.
func membarrier() bool {
	_, _, errno := syscall.Syscall(sysMembarrier, membarrierPrivateExpedited, 0, 0)
	return errno == 0
}
