package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Figures are what one run measured, for docs/reliability.md: tests record
// rows with figure, and with FAULTS_FIGURES set to a directory TestMain
// writes each table to <dir>/<table>.md after a passing run;
// scripts/reliability.sh splices them into the doc between its
// <!-- figures:<table> --> markers, so no measured number there is typed
// by hand.
var figures = struct {
	sync.Mutex
	header map[string][]string
	rows   map[string][][]string
}{header: map[string][]string{}, rows: map[string][][]string{}}

// figure records one row of table under header (the same for every row).
func figure(t *testing.T, table string, header []string, cells ...string) {
	t.Helper()
	if len(cells) != len(header) {
		t.Fatalf("figure %s: %d cells for %d columns", table, len(cells), len(header))
	}
	figures.Lock()
	defer figures.Unlock()
	figures.header[table] = header
	figures.rows[table] = append(figures.rows[table], cells)
}

// writeFigures writes every recorded table as a Markdown table file.
func writeFigures(dir string) error {
	figures.Lock()
	defer figures.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for table, header := range figures.header {
		if err := os.WriteFile(filepath.Join(dir, table+".md"), []byte(markdownTable(header, figures.rows[table])), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func markdownTable(header []string, rows [][]string) string {
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

// kb formats a byte count for a figures table.
func kb(n int) string {
	if n < 10*1024 {
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	if n < 10*1024*1024 {
		return fmt.Sprintf("%d KB", n/1024)
	}
	return fmt.Sprintf("%d MB", n/(1024*1024))
}

// dur formats a measured duration for a figures table.
func dur(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

var (
	errored     = regexp.MustCompile(`errored after [^:]*: (.*)`)
	packerError = regexp.MustCompile(`(?m)^Error: (.*)`)
)

// errorHeadline is the first line of the error packer reported for the
// build (the text after "Build 'x' errored after ...:"), shortened.
func errorHeadline(out string) string {
	var h string
	if m := errored.FindStringSubmatch(out); m != nil {
		h = m[1]
	} else if m := packerError.FindStringSubmatch(out); m != nil {
		h = m[1] // an error before any build started (a data source)
	} else {
		return "(no error line)"
	}
	h = strings.TrimSpace(h)
	if len(h) > 200 {
		h = h[:200] + "…"
	}
	return "`" + strings.ReplaceAll(h, "`", "'") + "`"
}

func TestMarkdownTable(t *testing.T) {
	got := markdownTable([]string{"a", "b"}, [][]string{{"1", "x|y"}})
	want := "| a | b |\n| --- | --- |\n| 1 | x\\|y |\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if h := errorHeadline("==> Build 'x' errored after 2 seconds 10 milliseconds: server abc went to ERROR\nmore"); h != "`server abc went to ERROR`" {
		t.Fatalf("headline %q", h)
	}
	if h := errorHeadline("Error: Datasource.Execute failed: repo x: no usable snapshot\n\n  on build.pkr.hcl"); h != "`Datasource.Execute failed: repo x: no usable snapshot`" {
		t.Fatalf("headline %q", h)
	}
}
