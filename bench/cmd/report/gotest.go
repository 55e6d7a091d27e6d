package main

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// benchPkg is the package whose benchmarks the report runs.
const benchPkg = "github.com/syncwatch/syncwatch/bench"

// Options say which cases to run and how long.
type Options struct {
	// Count is how many results each median is over: the number of rounds
	// of the timed cases, and of runs of the one-shot ones.
	Count int
	// Benchtime is go test's -benchtime for every case but the one-shot
	// ones, which always run one op (-benchtime 1x).
	Benchtime string
	// Filter selects the cases whose benchmark name matches; nil selects
	// every case.
	Filter *regexp.Regexp
}

// Invocation is one go test command.
type Invocation struct {
	// Tagged is set for the syncwatch_off build.
	Tagged bool
	// Args are the go command's arguments, starting with "test".
	Args []string
}

// String returns the command line.
func (inv Invocation) String() string { return "go " + strings.Join(inv.Args, " ") }

// Plan returns the go test commands that measure the selected cases: the
// micro cases in both builds, the scaling case at -cpu 1,2 and the
// one-shot cases at -benchtime 1x, untagged.
//
// The timed cases run in rounds, o.Count of them: each round runs every
// case once (-count 1), every implementation of a case one after another.
// A ratio compares implementations, and the machine it runs on has slow
// spells; with -count N in one command, a case's N results for one
// implementation would come from one stretch of time and another's from
// the next, so a spell would land on one side of the ratio. Round by
// round, a spell touches every implementation of the round alike, and the
// medians are over spread-out rounds.
//
// The one-shot cases run in a fresh process per count, so that what one
// churn leaves in a detector's process-wide state (go-deadlock's order
// map, say) cannot hide what the next one adds: each live-heap growth is
// that of a program doing one churn.
func Plan(o Options) []Invocation {
	var micros, scalings, oneShots []string
	for _, c := range cases {
		if o.Filter != nil && !o.Filter.MatchString(c.Bench) {
			continue
		}
		switch c.Kind {
		case micro:
			micros = append(micros, c.Bench)
		case scaling:
			scalings = append(scalings, c.Bench)
		case oneShot:
			oneShots = append(oneShots, c.Bench)
		}
	}
	var plan []Invocation
	add := func(tagged bool, benches []string, count int, benchtime string, extra ...string) {
		if len(benches) == 0 {
			return
		}
		args := []string{"test", "-run", "^$", "-bench", "^(" + strings.Join(benches, "|") + ")$",
			"-benchmem", "-count", strconv.Itoa(count), "-benchtime", benchtime, "-timeout", "0"}
		args = append(args, extra...)
		if tagged {
			args = append(args, "-tags", "syncwatch_off")
		}
		plan = append(plan, Invocation{Tagged: tagged, Args: append(args, benchPkg)})
	}
	for range o.Count {
		add(false, micros, 1, o.Benchtime)
		add(false, scalings, 1, o.Benchtime, "-cpu", "1,2")
		add(true, micros, 1, o.Benchtime)
	}
	for range o.Count {
		add(false, oneShots, 1, "1x")
	}
	return plan
}

// Execute runs inv, copying its output to progress as it comes, and
// parses the output. A failing go test whose output still holds results
// returns them with the error; the caller decides.
func Execute(inv Invocation, progress io.Writer) (*Output, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("go", inv.Args...)
	cmd.Stdout = io.MultiWriter(&stdout, progress)
	cmd.Stderr = io.MultiWriter(&stderr, progress)
	runErr := cmd.Run()
	out, err := Parse(&stdout)
	if err != nil {
		return nil, fmt.Errorf("%s: reading output: %w", inv, err)
	}
	if runErr != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = lastLines(stdout.String(), 5)
		}
		return out, fmt.Errorf("%s: %w\n%s", inv, runErr, msg)
	}
	return out, nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
