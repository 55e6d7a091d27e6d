package main

import (
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// interrupts are the signals that stop a run: each is passed on to go,
// and the run then ends as go does, removing its work directory, with the
// shell's code for the signal.
//
// go test, stopped by SIGTERM, would leave its test binaries running,
// and a test binary does not see a SIGINT sent to go alone. So under
// syncwatch test, go runs in a process group of its own (on Unix), and a
// signal goes to the whole group, as a terminal's Ctrl-C would; unless
// the input is a terminal, which a process group in the background
// cannot read, and whose Ctrl-C reaches every process anyway. Under
// syncwatch run it goes to go only, for the same reason. go's output is
// waited for at most outputDelay after it ends: a test binary left
// running would hold it open.
type interrupts struct {
	c     chan os.Signal
	done  chan struct{}
	group bool // go runs in a process group of its own

	mu    sync.Mutex
	child *os.Process // go, while it runs
	got   os.Signal   // the first signal caught
}

// outputDelay is how long go's output is read after go ends.
const outputDelay = 10 * time.Second

// catchInterrupts catches SIGINT and SIGTERM until stop is called; group
// is whether go is to run in a process group of its own.
func catchInterrupts(group bool) *interrupts {
	s := &interrupts{c: make(chan os.Signal, 1), done: make(chan struct{}), group: group}
	signal.Notify(s.c, os.Interrupt, syscall.SIGTERM)
	go s.pass()
	return s
}

// pass records each signal caught and passes it on to go if it runs.
func (s *interrupts) pass() {
	for {
		select {
		case sig := <-s.c:
			s.mu.Lock()
			if s.got == nil {
				s.got = sig
			}
			if s.child != nil {
				s.signal(sig)
			}
			s.mu.Unlock()
		case <-s.done:
			return
		}
	}
}

// run runs cmd, passing it the signals caught meanwhile.
func (s *interrupts) run(cmd *exec.Cmd) error {
	if s.group {
		ownGroup(cmd)
	}
	cmd.WaitDelay = outputDelay
	if err := cmd.Start(); err != nil {
		return err
	}
	s.mu.Lock()
	s.child = cmd.Process
	if s.got != nil {
		s.signal(s.got) // caught as go started
	}
	s.mu.Unlock()
	err := cmd.Wait()
	s.mu.Lock()
	s.child = nil
	s.mu.Unlock()
	return err
}

// signal sends sig to go, or to its process group. s.mu is held.
func (s *interrupts) signal(sig os.Signal) {
	if s.group {
		signalGroup(s.child, sig)
		return
	}
	s.child.Signal(sig)
}

// caught reports whether a signal was caught, and the exit code for it:
// 128 and the signal's number, as a shell gives.
func (s *interrupts) caught() (code int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.got == nil {
		return 0, false
	}
	if n, isSys := s.got.(syscall.Signal); isSys {
		return 128 + int(n), true
	}
	return 130, true
}

// stop stops catching signals: one that comes later ends the process.
func (s *interrupts) stop() {
	signal.Stop(s.c)
	close(s.done)
}

// inputIsTerminal reports whether the standard input may be a terminal: a
// character device other than the null device.
func inputIsTerminal() bool {
	in, err := os.Stdin.Stat()
	if err != nil || in.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(in, null)
}
