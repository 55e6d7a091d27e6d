package testchild

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestUntilStopsAtTheLine(t *testing.T) {
	cmd := exec.Command("sh", "-c", "echo one; echo two >&2; exec sleep 600")
	out, exited, err := Until(cmd, "two", time.Minute)
	if err != nil || exited {
		t.Fatalf("err %v, exited %v", err, exited)
	}
	if !strings.Contains(out, "one\n") || !strings.Contains(out, "two\n") {
		t.Errorf("output %q lacks a line", out)
	}
}

func TestUntilReturnsAtExit(t *testing.T) {
	out, exited, err := Until(exec.Command("sh", "-c", "echo done"), "never", time.Minute)
	if err != nil || !exited || out != "done\n" {
		t.Fatalf("out %q, exited %v, err %v", out, exited, err)
	}
}

func TestUntilGivesUpAtTheLimit(t *testing.T) {
	out, exited, err := Until(exec.Command("sh", "-c", "echo waiting; exec sleep 600"), "never", 10*time.Millisecond)
	// What it printed before the limit is returned; on a loaded machine
	// that may be nothing yet.
	if !errors.Is(err, ErrLimit) || exited || !strings.HasPrefix("waiting\n", out) {
		t.Fatalf("out %q, exited %v, err %v", out, exited, err)
	}
}
