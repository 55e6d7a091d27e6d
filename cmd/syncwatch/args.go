package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// options are syncwatch's own flags and the go command's, split.
type options struct {
	syncwatchDir string // -syncwatch DIR
	deps         bool   // -deps
	keep         bool   // -keep: leave the work directory
	mode         string // -mode (run only)
	mod          string // -mod: "vendor", "mod", or "" (vendor when there is one)
	vet          bool   // a -vet flag was given (for go test)

	goFlags    []string // flags for the go command, in order
	buildFlags []string // the flags among goFlags that change which files build
	patterns   []string // packages (test); the package (run)
	rest       []string // after -args (test), the program's arguments (run)
}

// goBoolFlags are the go build and go test flags that take no value: a
// bool flag is -name or -name=value, never -name value, so the argument
// after one is a package or another flag.
var goBoolFlags = []string{
	"a", "artifacts", "asan", "benchmem", "buildvcs", "c", "cover",
	"failfast", "fullpath", "i", "json", "linkshared", "modcacherw", "msan",
	"n", "race", "short", "trimpath", "v", "work", "x",
}

// testBoolFlags are the test binary's bool flags, which go test also takes
// spelt -test.name.
var testBoolFlags = []string{"benchmem", "failfast", "fullpath", "paniconexit0", "short", "v"}

// errUsage marks a command line syncwatch cannot read.
var errUsage = errors.New("syncwatch: bad usage")

// errHelp is parseArgs's answer to -h or -help: print the usage, and
// succeed.
var errHelp = errors.New("syncwatch: help requested")

// isBoolFlag reports whether the go command flag called name takes no
// value.
func isBoolFlag(name string) bool {
	if t, ok := strings.CutPrefix(name, "test."); ok {
		return slices.Contains(testBoolFlags, t)
	}
	return slices.Contains(goBoolFlags, name)
}

// parseArgs splits args. With program set (syncwatch run), the first
// argument that is not a flag is the package, and what follows it is the
// program's.
func parseArgs(args []string, program bool) (options, error) {
	var o options
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-args" || a == "--args" {
			if program {
				return o, fmt.Errorf("%w: -args is for syncwatch test", errUsage)
			}
			o.rest = args[i+1:]
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			o.patterns = append(o.patterns, a)
			if program {
				o.rest = args[i+1:]
				break
			}
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takeValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("%w: flag -%s needs a value", errUsage, name)
			}
			i++
			return args[i], nil
		}
		switch name {
		case "h", "help":
			return o, errHelp
		case "syncwatch":
			v, err := takeValue()
			if err != nil {
				return o, err
			}
			o.syncwatchDir = v
			continue
		case "deps", "keep":
			on := !hasValue || value == "true"
			if name == "deps" {
				o.deps = on
			} else {
				o.keep = on
			}
			continue
		case "mode":
			if program {
				v, err := takeValue()
				if err != nil {
					return o, err
				}
				o.mode = v
				continue
			}
		case "mod":
			// The go command always gets -mod=mod: a vendor directory
			// lacks syncwatch, and the temporary go.mod and go.sum are
			// completed as it builds. -mod says where the vendored
			// modules come from (vendor.go).
			v, err := takeValue()
			if err != nil {
				return o, err
			}
			if v != "vendor" && v != "mod" {
				return o, fmt.Errorf("%w: -mod=%s: syncwatch takes -mod=vendor or -mod=mod", errUsage, v)
			}
			o.mod = v
			continue
		case "modfile", "overlay":
			return o, fmt.Errorf("%w: syncwatch sets -%s itself", errUsage, name)
		}
		flag := []string{a}
		if !hasValue && !isBoolFlag(name) {
			v, err := takeValue()
			if err != nil {
				return o, err
			}
			flag = append(flag, v)
		}
		o.goFlags = append(o.goFlags, flag...)
		o.vet = o.vet || name == "vet"
		if name == "tags" || name == "race" || name == "msan" || name == "asan" {
			o.buildFlags = append(o.buildFlags, flag...)
		}
	}
	if program && len(o.patterns) == 0 {
		return o, fmt.Errorf("%w: syncwatch run needs a package", errUsage)
	}
	return o, nil
}
