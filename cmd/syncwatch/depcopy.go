package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// The go command refuses an overlay for a file of the module cache, so a
// dependency module that -deps rewrites there is copied (hard links where
// the file system allows) into the work directory, the rewritten files
// written over their links, and the temporary go.mod replaces the module
// with its copy.

// moduleCache returns GOMODCACHE.
func moduleCache() (string, error) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("syncwatch: go env GOMODCACHE: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// copiedModule is a module of the cache that is rewritten in a copy.
type copiedModule struct {
	path string // module path
	dir  string // its directory in the cache
	copy string // its copy
	made bool   // whether the copy was made
}

// inside reports whether path is dir or below it.
func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// copyModule copies m.dir to m.copy: a hard link per file, or a copy
// where links fail. A module without a go.mod (older than modules) gets
// the one the go command would make up for it.
func copyModule(m copiedModule) error {
	err := filepath.WalkDir(m.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(m.dir, path)
		if err != nil {
			return err
		}
		to := filepath.Join(m.copy, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if os.Link(path, to) == nil {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		return err
	}
	gomod := filepath.Join(m.copy, "go.mod")
	if _, err := os.Stat(gomod); os.IsNotExist(err) {
		return os.WriteFile(gomod, []byte("module "+modfile.AutoQuote(m.path)+"\n"), 0o644)
	}
	return nil
}

// writeOver replaces the file at path, a hard link into the cache, with
// data, leaving the cache's file alone.
func writeOver(path string, data []byte) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return writeFile(path, data)
}

// addReplaces replaces each copied module with its copy in the go.mod at
// modPath, over any replace the module had.
func addReplaces(modPath string, mods []copiedModule) error {
	if len(mods) == 0 {
		return nil
	}
	data, err := os.ReadFile(modPath)
	if err != nil {
		return err
	}
	f, err := modfile.Parse(modPath, data, nil)
	if err != nil {
		return err
	}
	for _, m := range mods {
		for _, r := range f.Replace {
			if r.Old.Path == m.path {
				if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
					return err
				}
			}
		}
		if err := f.AddReplace(m.path, "", m.copy, ""); err != nil {
			return err
		}
	}
	out, err := f.Format()
	if err != nil {
		return err
	}
	return os.WriteFile(modPath, out, 0o644)
}

// originalSites names, in the findings' sites, the files of copied
// modules by their place in the module cache, where a reader finds them.
func originalSites(fs []*finding, mods []copiedModule) {
	for _, f := range fs {
		for i, s := range f.Sites {
			for _, m := range mods {
				s = strings.ReplaceAll(s, m.copy+string(filepath.Separator), m.dir+string(filepath.Separator))
			}
			f.Sites[i] = s
		}
	}
}
