package lockorder_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stateMap is where lockorder's package-level state is listed.
const stateMap = "../docs/ENGINE.md"

// TestPackageStateIsDocumented checks that the table of package-level
// variables in docs/ENGINE.md lists exactly those the package declares,
// each in its file. It parses every non-test file whatever its build
// tags, so it says the same with and without -tags syncwatch_off.
func TestPackageStateIsDocumented(t *testing.T) {
	declared := declaredVars(t, ".")
	require.NotEmpty(t, declared, "no package-level variable found")
	documented := documentedVars(t, stateMap)
	require.NotEmpty(t, documented, "no table of package state in %s", stateMap)
	missing, stale := stateDrift(declared, documented)
	assert.Empty(t, missing, "package-level variables not in %s's Package state table", stateMap)
	assert.Empty(t, stale, "%s lists variables the package does not declare in that file", stateMap)
}

// TestPackageStateCheckSeesDrift checks the check itself on a package of
// its own: a variable left out of the table, and a row for a variable
// that is gone, are both found; a test file's variable is not state.
func TestPackageStateCheckSeesDrift(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	write("a.go", "package p\n\nvar (\n\tkept int\n\tadded = 1\n)\n\nvar _ = kept\n")
	write("a_test.go", "package p\n\nvar inTest int\n")
	write("STATE.md", "## Package state\n\n| file | variable | what |\n|---|---|---|\n"+
		"| a.go | `kept` | x |\n| a.go | `removed` | y |\n\n## Next\n\n| b.go | `other` | z |\n")
	missing, stale := stateDrift(declaredVars(t, dir), documentedVars(t, filepath.Join(dir, "STATE.md")))
	assert.Equal(t, []string{"a.go added"}, missing)
	assert.Equal(t, []string{"a.go removed"}, stale)
}

// stateDrift returns the entries of declared missing from documented,
// and those of documented missing from declared.
func stateDrift(declared, documented []string) (missing, stale []string) {
	for _, v := range declared {
		if !slices.Contains(documented, v) {
			missing = append(missing, v)
		}
	}
	for _, v := range documented {
		if !slices.Contains(declared, v) {
			stale = append(stale, v)
		}
	}
	return missing, stale
}

// declaredVars returns "file var" for each package-level variable of the
// non-test files in dir, sorted.
func declaredVars(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var vars []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range af.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if n.Name != "_" {
						vars = append(vars, filepath.Base(f)+" "+n.Name)
					}
				}
			}
		}
	}
	slices.Sort(vars)
	return vars
}

// documentedVars returns "file var" for each row of the table under the
// "## Package state" heading of the markdown file path, sorted. A row is
// "| file | `var` | what it holds |".
func documentedVars(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var vars []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Package state"
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		file := strings.TrimSpace(cells[1])
		name := strings.Trim(strings.TrimSpace(cells[2]), "`")
		if !strings.HasSuffix(file, ".go") {
			continue // the header and its rule
		}
		vars = append(vars, file+" "+name)
	}
	require.NoError(t, sc.Err())
	slices.Sort(vars)
	return vars
}
