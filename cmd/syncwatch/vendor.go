package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	modpath "golang.org/x/mod/module"
)

// A module with a vendor directory is built from it, offline, without
// -mod=vendor: the go command reads vendor/modules.txt past -overlay, so
// a requirement on syncwatch cannot be added there. Instead the temporary
// go.mod replaces each module that vendor/modules.txt lists with a
// directory: its vendor directory, given a go.mod through the overlay,
// or, for a module none of whose packages are vendored, an empty module
// in the work directory. syncwatch and the modules it requires that are
// not vendored come from where they would without a vendor directory.

// vendoredModule is a module that vendor/modules.txt lists.
type vendoredModule struct {
	path      string
	goVersion string // from its "## explicit; go 1.N" line, or ""
	packages  bool   // whether a package of it is vendored
}

// errNoVendor is returned for -mod=vendor in a module without a vendor
// directory.
var errNoVendor = errors.New("syncwatch: -mod=vendor: no vendor/modules.txt (run go mod vendor)")

// readVendored parses dir/vendor/modules.txt; it returns nil when there
// is none, unless required.
func readVendored(dir string, required bool) ([]vendoredModule, error) {
	f, err := os.Open(filepath.Join(dir, "vendor", "modules.txt"))
	if errors.Is(err, os.ErrNotExist) {
		if required {
			return nil, errNoVendor
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mods []vendoredModule
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# "):
			fields := strings.Fields(line[2:])
			if len(fields) < 2 || fields[1] == "=>" {
				continue // a replace with no requirement: nothing to build
			}
			mods = append(mods, vendoredModule{path: fields[0]})
		case strings.HasPrefix(line, "## ") && len(mods) > 0:
			for ann := range strings.SplitSeq(line[3:], ";") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(ann), "go "); ok {
					mods[len(mods)-1].goVersion = v
				}
			}
		case line != "" && !strings.HasPrefix(line, "#") && len(mods) > 0:
			mods[len(mods)-1].packages = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("syncwatch: reading vendor/modules.txt: %w", err)
	}
	return mods, nil
}

// replaceVendored replaces, in f, each module vendored in m with its
// directory (see above), except syncwatch's own. It writes the go.mod
// files those directories get into work and returns them as overlay
// entries (vendor directory's go.mod -> the written file). With required
// set (-mod=vendor), m must have a vendor directory.
func replaceVendored(f *modfile.File, m module, work string, required bool) (map[string]string, error) {
	mods, err := readVendored(m.dir, required)
	if err != nil {
		return nil, err
	}
	overlay := map[string]string{}
	for i, vm := range mods {
		if vm.path == selfModule || modpath.CheckImportPath(vm.path) != nil {
			continue
		}
		gomod := "module " + modfile.AutoQuote(vm.path) + "\n"
		if vm.goVersion != "" {
			gomod += "\ngo " + vm.goVersion + "\n"
		}
		dir := filepath.Join(m.dir, "vendor", filepath.FromSlash(vm.path))
		written := filepath.Join(work, "vendor", fmt.Sprint(i), "go.mod")
		if vm.packages {
			overlay[filepath.Join(dir, "go.mod")] = written
		} else {
			dir = filepath.Dir(written)
		}
		if err := writeFile(written, []byte(gomod)); err != nil {
			return nil, err
		}
		for _, r := range f.Replace {
			if r.Old.Path == vm.path {
				if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
					return nil, err
				}
			}
		}
		if err := f.AddReplace(vm.path, "", dir, ""); err != nil {
			return nil, err
		}
	}
	return overlay, nil
}

// writeOverlay writes an overlay file for the go command at path.
func writeOverlay(path string, replace map[string]string) error {
	data, err := json.Marshal(struct{ Replace map[string]string }{replace})
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
