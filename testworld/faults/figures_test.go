package faults

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/figures"
)

// The tables of docs/reliability.md this suite measures are recorded with
// the figures package (see there); these are its short names here.
var (
	figure = figures.Record
	kb     = figures.KB
	dur    = figures.Dur
)

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
	got := figures.Markdown([]string{"a", "b"}, [][]string{{"1", "x|y"}})
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
