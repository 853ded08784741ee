package testworld_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module root, seen from this package's directory.
const root = ".."

// TestDevelopmentLayout holds docs/development.md's layout table to the
// tree: every Go package of the module is named in a row's first column,
// and every path a row names exists (a file or pattern in a later column
// is looked up from the root and from the row's own directories).
func TestDevelopmentLayout(t *testing.T) {
	rows := tableRows(t, "## Layout")
	named := map[string]bool{}
	for _, cells := range rows {
		bases := backticked(cells[0])
		for _, b := range bases {
			named[b] = true
			if !exists(b) {
				t.Errorf("layout table: %q does not exist", b)
			}
		}
		for _, cell := range cells[1:] {
			for _, tok := range backticked(cell) {
				if looksLikePath(tok) && !existsUnder(tok, bases) {
					t.Errorf("layout table, row %s: %q exists neither at the root nor under the row's directories", cells[0], tok)
				}
			}
		}
	}
	pkgs := goPackages(t)
	if len(pkgs) < 30 {
		t.Fatalf("found %d Go packages; the module has more than 30", len(pkgs))
	}
	for _, p := range pkgs {
		if !named[p] {
			t.Errorf("layout table: package %s has no row (name it in a first column)", p)
		}
	}
}

// TestDevelopmentOptionsTable holds docs/development.md's table of why
// each provisioner option exists to the options the provisioner has (its
// generated reference): every option has a row, every row names options.
func TestDevelopmentOptionsTable(t *testing.T) {
	options := map[string]bool{}
	// Config's own options and the content options squashed into it
	for _, name := range []string{"Config-not-required.mdx", "ContentOptions-not-required.mdx"} {
		partial, err := os.ReadFile(filepath.Join(root, "docs-partials", "provisioner", "fatimage", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range reOption.FindAllStringSubmatch(string(partial), -1) {
			options[m[1]] = true
		}
	}
	if len(options) < 40 {
		t.Fatalf("%d options in the provisioner's reference; it has more than 40", len(options))
	}
	listed := map[string]bool{}
	for _, cells := range tableRows(t, "## Why each provisioner option exists") {
		for _, o := range backticked(cells[0]) {
			listed[o] = true
			if !options[o] {
				t.Errorf("options table: %q is not an option of the provisioner", o)
			}
		}
	}
	for o := range options {
		if !listed[o] {
			t.Errorf("options table: option %q has no row saying why it exists", o)
		}
	}
}

// tableRows are the cells of the body rows of the first table under
// heading in docs/development.md.
func tableRows(t *testing.T, heading string) [][]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/development.md has no %q section", heading)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var rows [][]string
	header := true
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| ") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		if header || strings.HasPrefix(line, "| ---") {
			header = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		rows = append(rows, cells)
	}
	if len(rows) < 5 {
		t.Fatalf("docs/development.md %q: %d table rows", heading, len(rows))
	}
	return rows
}

// reOption is an option's line in a generated reference partial.
var reOption = regexp.MustCompile("(?m)^- `([a-z0-9_]+)`")

var reCode = regexp.MustCompile("`([^`]+)`")

func backticked(s string) []string {
	var out []string
	for _, m := range reCode.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// looksLikePath: a token without spaces holding a slash or ending in a
// file extension (`step_*.go`, `files/`), not an option or a command.
func looksLikePath(tok string) bool {
	return !strings.Contains(tok, " ") && (strings.Contains(tok, "/") || reExt.MatchString(tok))
}

var reExt = regexp.MustCompile(`\.[A-Za-z0-9]+$`)

func exists(p string) bool {
	m, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(p)))
	return len(m) > 0
}

func existsUnder(p string, bases []string) bool {
	if exists(p) {
		return true
	}
	for _, b := range bases {
		if exists(b + "/" + p) {
			return true
		}
	}
	return false
}

// goPackages are the directories of the module holding Go files, as
// paths from the root ("." for the root): not testdata, hidden
// directories or other modules (tools/).
func goPackages(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if dir := filepath.ToSlash(filepath.Dir(rel)); strings.HasSuffix(p, ".go") && !seen[dir] {
			seen[dir] = true
			out = append(out, dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
