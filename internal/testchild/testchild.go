// Package testchild runs a test binary's child process until it prints a
// given line or exits: the tests that check what a deadlocked program
// prints, whether or not it is ended, use it. It is for tests only.
package testchild

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// ErrLimit is returned by Until for a child that neither printed the line
// nor exited in time.
var ErrLimit = errors.New("testchild: the child neither printed the line nor exited in time")

// Until starts cmd and returns its output (standard output and standard
// error, interleaved) once it has printed a line containing until (if
// until is not ""), then kills it, or once it has exited by itself
// (exited), whichever comes first. A child that does neither within limit is killed, and Until
// returns what it printed and an error wrapping ErrLimit.
func Until(cmd *exec.Cmd, until string, limit time.Duration) (out string, exited bool, err error) {
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return "", false, fmt.Errorf("testchild: starting the child: %w", err)
	}
	ended := make(chan struct{})
	go func() {
		cmd.Wait()
		w.Close()
		close(ended)
	}()
	var b strings.Builder
	found, read := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		seen := false
		for sc.Scan() {
			b.WriteString(sc.Text())
			b.WriteByte('\n')
			if !seen && until != "" && strings.Contains(sc.Text(), until) {
				seen = true
				close(found)
			}
		}
		io.Copy(io.Discard, r) // a line past the buffer: drain
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-found:
		cmd.Process.Kill()
	case <-ended:
		exited = true
	case <-timer.C:
		cmd.Process.Kill()
		err = fmt.Errorf("%w (%v, waiting for %q)", ErrLimit, limit, until)
	}
	<-read
	return b.String(), exited, err
}
