//go:generate packer-sdc struct-markdown

package fatimage

import (
	"context"
	_ "embed"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// LineEdit changes one line of a file already in the image (a package's
// or the base image's), as Ansible's lineinfile does: the appliance edits
// files it does not own (tuned's hpc-compute profile, /etc/profile,
// /etc/profile.d/sh.local) rather than replacing them, so an update of
// their package keeps its own other lines.
type LineEdit struct {
	// Absolute path of the file. A missing file fails the build (naming
	// the edit) unless `create` is true.
	Path string `mapstructure:"path" required:"true"`
	// POSIX extended regular expression (as awk and grep -E take it)
	// matched against each line. With `line`: the last matching line is
	// replaced by it; with none matching, `line` is added. With
	// `absent`: every matching line is removed. Without it, `line`
	// itself is looked for.
	Regexp string `mapstructure:"regexp"`
	// The line the file must hold, without newline.
	Line string `mapstructure:"line"`
	// Remove the lines matching `regexp` instead (requires `regexp`).
	Absent bool `mapstructure:"absent"`
	// INI section (e.g. `sysctl` for [sysctl]) the line belongs to: only
	// lines inside it are matched, a new line goes at the section's end,
	// and a missing section is added at the file's end.
	Section string `mapstructure:"section"`
	// Create the file (root:root 0644, parent directories 0755) when it
	// is missing, instead of failing. Default false.
	Create bool `mapstructure:"create"`
}

//go:embed content/lines.sh
var contentLinesSh string

var reINISection = regexp.MustCompile(`^[A-Za-z0-9_.:@ -]+$`)

// id is the edit's identity when groups and the template merge: the
// file and what it matches.
func (e LineEdit) id() string {
	m := e.Regexp
	if m == "" {
		m = "line:" + e.Line
	}
	return e.Path + " [" + e.Section + "] " + m
}

// validateLineEdits checks each edit without touching the VM.
func validateLineEdits(edits []LineEdit) []error {
	var errs []error
	add := func(i int, f string, a ...any) {
		errs = append(errs, fmt.Errorf("line_edits[%d]: "+f, append([]any{i}, a...)...))
	}
	seen := map[string]int{}
	for i, e := range edits {
		if !path.IsAbs(e.Path) || path.Clean(e.Path) != e.Path || strings.ContainsAny(e.Path, "\n\r") {
			add(i, "path %q must be a clean absolute path", e.Path)
		}
		if e.Regexp != "" {
			if strings.ContainsAny(e.Regexp, "\n\r") {
				add(i, "regexp must be one line")
			} else if _, err := regexp.CompilePOSIX(e.Regexp); err != nil {
				add(i, "regexp %q is not a POSIX extended regular expression: %v", e.Regexp, err)
			}
		}
		switch {
		case e.Absent && e.Line != "":
			add(i, "line and absent are exclusive: absent removes the lines matching regexp")
		case e.Absent && e.Regexp == "":
			add(i, "absent needs regexp: it removes the lines matching it")
		case !e.Absent && e.Line == "":
			add(i, "line is required (or absent = true with regexp)")
		}
		if strings.ContainsAny(e.Line, "\n\r") {
			add(i, "line must be one line, without newline")
		}
		if e.Section != "" && !reINISection.MatchString(e.Section) {
			add(i, "section %q must be a plain INI section name, without brackets", e.Section)
		}
		if e.Create && e.Absent {
			add(i, "create with absent: a file created empty holds no line to remove")
		}
		if j, ok := seen[e.id()]; ok {
			add(i, "edits the same line of %s as line_edits[%d]", e.Path, j)
		}
		seen[e.id()] = i
	}
	return errs
}

// scriptLineEdits is the calls editing the lines, in order.
func scriptLineEdits(edits []LineEdit) string {
	var b strings.Builder
	for i, e := range edits {
		mode := "present"
		if e.Absent {
			mode = "absent"
		}
		fmt.Fprintf(&b, "fatimage_line_edit %s %s %s %s %s %s %s\n", shQuote(fmt.Sprintf("line_edits[%d]", i)),
			shQuote(e.Path), shQuote(mode), shQuote(e.Regexp), shQuote(e.Line), shQuote(e.Section), flag01(e.Create))
	}
	return b.String()
}

// stepLineEdits edits the lines, after packages, files and system
// settings: the files edited are often a package's.
func stepLineEdits(ctx context.Context, s *state) error {
	s.say(fmt.Sprintf("line edits (%d)", len(s.plan.LineEdits)))
	_, err := s.runScript(ctx, rawScript(contentCommonSh+contentLinesSh+scriptLineEdits(s.plan.LineEdits)))
	return err
}
