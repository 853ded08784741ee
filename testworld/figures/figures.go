// Package figures holds what one run of the tests measured, for
// docs/reliability.md: tests record rows with Record, and with
// FAULTS_FIGURES set to a directory the package's TestMain calls Write,
// which writes each table to <dir>/<table>.md after a passing run;
// scripts/reliability.sh splices them into the doc between its
// <!-- figures:<table> --> markers, so no measured number there is typed
// by hand. Each table is recorded by one test package only, as every
// package writes its own tables to the same directory.
package figures

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Env names the directory the tables go to; unset, nothing is written.
const Env = "FAULTS_FIGURES"

var figures = struct {
	sync.Mutex
	header map[string][]string
	rows   map[string][][]string
}{header: map[string][]string{}, rows: map[string][][]string{}}

// Record records one row of table under header (the same for every row).
func Record(t testing.TB, table string, header []string, cells ...string) {
	t.Helper()
	if len(cells) != len(header) {
		t.Fatalf("figure %s: %d cells for %d columns", table, len(cells), len(header))
	}
	figures.Lock()
	defer figures.Unlock()
	figures.header[table] = header
	figures.rows[table] = append(figures.rows[table], cells)
}

// Main runs the tests of a package and, when they pass and Env is set,
// writes the tables they recorded; it returns the exit code.
func Main(m *testing.M) int {
	return Written(m.Run())
}

// Written writes the recorded tables when code (of a test run) is 0 and
// Env is set, and returns code, or 1 when they could not be written.
func Written(code int) int {
	if dir := os.Getenv(Env); dir != "" && code == 0 {
		if err := write(dir); err != nil {
			fmt.Fprintln(os.Stderr, Env+":", err)
			return 1
		}
	}
	return code
}

// write writes every recorded table as a Markdown table file.
func write(dir string) error {
	figures.Lock()
	defer figures.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for table, header := range figures.header {
		if err := os.WriteFile(filepath.Join(dir, table+".md"), []byte(Markdown(header, figures.rows[table])), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Markdown renders a table, escaping the cells' pipes.
func Markdown(header []string, rows [][]string) string {
	var b strings.Builder
	line := func(cells []string) {
		esc := make([]string, len(cells))
		for i, c := range cells {
			esc[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		b.WriteString("| " + strings.Join(esc, " | ") + " |\n")
	}
	line(header)
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = "---"
	}
	line(sep)
	for _, r := range rows {
		line(r)
	}
	return b.String()
}

// KB formats a byte count for a table.
func KB(n int) string {
	if n < 10*1024 {
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	if n < 10*1024*1024 {
		return fmt.Sprintf("%d KB", n/1024)
	}
	return fmt.Sprintf("%d MB", n/(1024*1024))
}

// Dur formats a measured duration for a table.
func Dur(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
