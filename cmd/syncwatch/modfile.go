package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/mod/modfile"
)

// selfModule is syncwatch's module path.
const selfModule = "github.com/syncwatch/syncwatch"

// develVersion is the version a replace to a local checkout requires.
const develVersion = "v0.0.0-00010101000000-000000000000"

// errNotModule is returned outside a Go module.
var errNotModule = errors.New("syncwatch: not in a Go module (run it where go.mod is, or below)")

// module is the user's module.
type module struct {
	path   string // module path
	dir    string // where go.mod is
	mod    string // go.mod's path
	goLine string // its go line's version ("1.21"), "" if none
}

func findModule() (module, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return module{}, fmt.Errorf("syncwatch: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return module{}, errNotModule
	}
	data, err := os.ReadFile(gomod)
	if err != nil {
		return module{}, err
	}
	f, err := modfile.ParseLax(gomod, data, nil)
	if err != nil || f.Module == nil {
		return module{}, fmt.Errorf("syncwatch: reading %s: %v", gomod, err)
	}
	m := module{path: f.Module.Mod.Path, dir: filepath.Dir(gomod), mod: gomod}
	if f.Go != nil {
		m.goLine = f.Go.Version
	}
	return m, nil
}

// source is the syncwatch that rewritten code imports: a local checkout
// (dir set) or a published version.
type source struct {
	dir     string
	version string
	note    string // said once on stderr
}

// findSource picks the syncwatch to use: -syncwatch DIR, else the version
// this command was built from, else (a development build) the checkout
// it was built from.
func findSource(flagDir string) (source, error) {
	if flagDir != "" {
		return checkout(flagDir)
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path == selfModule &&
		bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return source{version: bi.Main.Version}, nil
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return source{}, fmt.Errorf("%w: a development build of syncwatch needs -syncwatch DIR", errUsage)
	}
	s, err := checkout(filepath.Join(filepath.Dir(file), "..", ".."))
	if err != nil {
		return source{}, fmt.Errorf("%w: a development build of syncwatch needs -syncwatch DIR (%v)", errUsage, err)
	}
	s.note = fmt.Sprintf("syncwatch: a development build: using the checkout it was built from, %s (-syncwatch DIR to choose another)", s.dir)
	return s, nil
}

func checkout(dir string) (source, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return source{}, err
	}
	data, err := os.ReadFile(filepath.Join(abs, "go.mod"))
	if err != nil {
		return source{}, fmt.Errorf("syncwatch: -syncwatch %s: %w", dir, err)
	}
	if modfile.ModulePath(data) != selfModule {
		return source{}, fmt.Errorf("syncwatch: -syncwatch %s: not a checkout of %s", dir, selfModule)
	}
	return source{dir: abs}, nil
}

// writeModfile writes work/go.mod and work/go.sum: the module's own, plus
// a requirement on syncwatch (and a replace for a checkout), and, unless
// mod is "mod", replaces of its vendored modules (vendor.go), whose
// overlay entries it returns. The go command completes them (-mod=mod) as
// it builds.
func writeModfile(m module, src source, work, mod string) (string, map[string]string, error) {
	data, err := os.ReadFile(m.mod)
	if err != nil {
		return "", nil, err
	}
	f, err := modfile.Parse(m.mod, data, nil)
	if err != nil {
		return "", nil, fmt.Errorf("syncwatch: %w", err)
	}
	var overlay map[string]string
	if mod != "mod" {
		if overlay, err = replaceVendored(f, m, work, mod == "vendor"); err != nil {
			return "", nil, err
		}
	}
	version := src.version
	if src.dir != "" {
		version = develVersion
		if err := f.AddReplace(selfModule, "", src.dir, ""); err != nil {
			return "", nil, err
		}
	}
	if err := f.AddRequire(selfModule, version); err != nil {
		return "", nil, err
	}
	if err := keepGodebug(f); err != nil {
		return "", nil, err
	}
	out, err := f.Format()
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(work, "go.mod")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return "", nil, err
	}
	sum, err := os.ReadFile(filepath.Join(m.dir, "go.sum"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", nil, err
	}
	if src.dir != "" {
		// The checkout's sums cover syncwatch's own requirements offline.
		if own, err := os.ReadFile(filepath.Join(src.dir, "go.sum")); err == nil {
			sum = append(append(sum, '\n'), own...)
		}
	}
	return path, overlay, os.WriteFile(filepath.Join(work, "go.sum"), sum, 0o644)
}

// excludedModules lists the modules -deps leaves alone: syncwatch and
// every module that provides a package lockorder or lockordertest
// imports (rewriting one would make lockorder import itself). Other
// modules syncwatch requires (golang.org/x/sync, whose errgroup orders
// its tasks with a sync.WaitGroup) are rewritten like any dependency.
func excludedModules(modPath, overlay string) (map[string]bool, error) {
	cmd := exec.Command("go", "list", "-modfile="+modPath, "-overlay="+overlay, "-mod=mod", "-deps",
		"-f", "{{with .Module}}{{.Path}}{{end}}", selfModule+"/lockorder", selfModule+"/lockorder/lockordertest")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("syncwatch: go list -deps of lockordertest: %w", err)
	}
	ex := map[string]bool{selfModule: true}
	for _, path := range strings.Fields(string(out)) {
		ex[path] = true
	}
	return ex, nil
}

// keepGodebug pins the GODEBUG defaults of the module's own go line
// ("godebug default=go1.17"), unless its go.mod already sets a default. The
// go command raises the go line to syncwatch's, and with it the defaults
// the test binaries run with: a module at go 1.17 would otherwise lose, for
// one, its 512-bit test certificates (rsa1024min) and fail tests that pass
// under go test.
func keepGodebug(f *modfile.File) error {
	if f.Go == nil || f.Go.Version == "" {
		return nil
	}
	for _, g := range f.Godebug {
		if g.Key == "default" {
			return nil
		}
	}
	return f.AddGodebug("default", "go"+f.Go.Version)
}
