package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

const usage = `usage:
	syncwatch test [-syncwatch DIR] [-deps] [-mod vendor|mod] [-keep] [go test flags] [packages]
	syncwatch run [-syncwatch DIR] [-deps] [-mod vendor|mod] [-keep] [-mode check|trace|off] [go build flags] package [arguments]

Run 'go doc github.com/syncwatch/syncwatch/cmd/syncwatch' for details.
`

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// runMain runs one command and returns the exit code.
func runMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	program := false
	switch args[0] {
	case "test":
	case "run":
		program = true
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "syncwatch: unknown command %q\n%s", args[0], usage)
		return 2
	}
	o, err := parseArgs(args[1:], program)
	if err == nil && program {
		switch o.mode {
		case "":
			o.mode = "check"
		case "check", "trace", "off":
		default:
			err = fmt.Errorf("%w: -mode %q: want check, trace or off", errUsage, o.mode)
		}
	}
	if errors.Is(err, errHelp) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%v\n%s", err, usage)
		return 2
	}
	code, err := command(o, program, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return code
}

// command prepares the rewrite and runs go test or go run on it.
func command(o options, program bool, stdout, stderr io.Writer) (int, error) {
	start := time.Now()
	note, err := leaveWorkspace()
	if err != nil {
		return 0, err
	}
	if note != "" {
		fmt.Fprintln(stderr, note)
	}
	m, err := findModule()
	if err != nil {
		return 0, err
	}
	src, err := findSource(o.syncwatchDir)
	if err != nil {
		return 0, err
	}
	if src.note != "" {
		fmt.Fprintln(stderr, src.note)
	}
	work, release, err := newWorkDir(o.keep)
	if err != nil {
		return 0, err
	}
	defer release()
	if o.keep {
		fmt.Fprintf(stderr, "syncwatch: work directory %s (kept)\n", work)
	}
	sig := catchInterrupts(!program && !inputIsTerminal())
	defer sig.stop()
	modPath, vendored, err := writeModfile(m, src, work, o.mod)
	if err != nil {
		return 0, err
	}
	excluded := map[string]bool{selfModule: true}
	if o.deps {
		modOverlay := filepath.Join(work, "overlay-gomod.json")
		if err := writeOverlay(modOverlay, vendored); err != nil {
			return 0, err
		}
		if excluded, err = excludedModules(modPath, modOverlay); err != nil {
			return 0, err
		}
	}
	overlay, set, err := prepare(m, o, work, excluded, vendored, !program)
	if err != nil {
		return 0, err
	}
	if err := addReplaces(modPath, set.copied); err != nil {
		return 0, err
	}
	if code, ok := sig.caught(); ok {
		return code, nil
	}
	for _, n := range set.notes {
		fmt.Fprintln(stderr, "syncwatch: "+n)
	}
	if os.Getenv("SYNCWATCH_TIMING") != "" {
		fmt.Fprintf(stderr, "syncwatch: rewrote %d file(s) in %v\n", set.files, time.Since(start).Round(time.Millisecond))
	}

	goArgs := []string{"test"}
	if program {
		goArgs[0] = "run"
	}
	goArgs = append(goArgs, "-modfile="+modPath, "-overlay="+overlay, "-mod=mod")
	if !program && !o.vet {
		if f := testVetFlag(m.goLine); f != "" {
			goArgs = append(goArgs, f)
		}
	}
	goArgs = append(goArgs, o.goFlags...)
	goArgs = append(goArgs, o.patterns...)
	if program || len(o.rest) > 0 {
		if !program {
			goArgs = append(goArgs, "-args")
		}
		goArgs = append(goArgs, o.rest...)
	}
	findings := filepath.Join(work, "findings.jsonl")
	cmd := exec.Command("go", goArgs...)
	dl := &deadlockWatcher{w: stdout}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, dl, stderr
	cmd.Env = append(os.Environ(), lockordertest.FindingsEnv+"="+findings)
	if program {
		// A program gets the user's GOEXPERIMENT as it is: only test
		// binaries put it back (lockordertest imports lockorder), and
		// outside tests no deadlock is acted on anyway.
		cmd.Env = append(cmd.Env, "SYNCWATCH_MODE="+o.mode)
	} else {
		cmd.Env = withLeakProfile(cmd.Env)
	}
	code := 0
	if err := sig.run(cmd); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return 0, fmt.Errorf("syncwatch: go %s: %w", goArgs[0], err)
		}
		code = exit.ExitCode()
	}
	if c, ok := sig.caught(); ok {
		code = c // go was stopped: its findings are what it wrote
	}
	fs, err := readFindings(findings)
	if err != nil {
		return 0, err
	}
	fs = append(fs, dl.findings()...)
	originalSites(fs, set.copied)
	writeSummary(stderr, fs)
	if len(fs) > 0 && code == 0 {
		code = 1
	}
	return code, nil
}
