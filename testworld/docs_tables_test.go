package testworld_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsTablesWellFormed: every row of every Markdown table in the
// tracked docs has as many cells as its header. A renderer drops a row's
// extra cells without a word (docs/lab.md's Vendor repositories row lost
// its last sentence that way), and a new column added to a table must
// reach every row.
func TestDocsTablesWellFormed(t *testing.T) {
	out, err := exec.Command("git", "-C", root, "ls-files", "*.md", "*.mdx").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Fields(string(out))
	if len(files) < 10 {
		t.Fatalf("git ls-files found %d Markdown files; the docs have more", len(files))
	}
	tables := 0
	for _, f := range files {
		tables += checkTables(t, filepath.Join(root, f))
	}
	if tables < 20 {
		t.Fatalf("found %d tables in the docs; they have more", tables)
	}
}

// checkTables reports each table row whose cell count differs from its
// header's, and returns how many tables the file has.
func checkTables(t *testing.T, path string) int {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	line, header, tables, fence := 0, 0, 0, false
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(text), "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(text, "|") {
			header = 0
			continue
		}
		n := tableCells(text)
		if header == 0 {
			header, tables = n, tables+1
			continue
		}
		if n != header {
			t.Errorf("%s:%d: %d cells, the table's header has %d", path, line, n, header)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tables
}

// tableCells counts a row's cells as GitHub's Markdown does: every pipe
// not escaped with a backslash separates cells, inside code spans too.
func tableCells(row string) int {
	row = strings.TrimPrefix(strings.TrimSpace(row), "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	n := 1
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}
