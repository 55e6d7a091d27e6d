//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup makes cmd run in a process group of its own.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to p's process group, which p leads.
func signalGroup(p *os.Process, sig os.Signal) {
	if n, ok := sig.(syscall.Signal); ok {
		syscall.Kill(-p.Pid, n)
		return
	}
	p.Signal(sig)
}
