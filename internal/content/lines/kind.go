package lines

import (
	_ "embed"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

// Kind is the line_edits kind.
type Kind struct{}

var _ content.Kind[LineEdit] = Kind{}

var reINISection = regexp.MustCompile(`^[A-Za-z0-9_.:@ -]+$`)

// Option implements content.Kind.
func (Kind) Option() string { return "line_edits" }

// ID is the edit's identity when groups and the template merge: the
// file and what it matches.
func (Kind) ID(e LineEdit) string {
	m := e.Regexp
	if m == "" {
		m = "line:" + e.Line
	}
	return e.Path + " [" + e.Section + "] " + m
}

// Validate checks each edit without touching the VM.
func (k Kind) Validate(edits []LineEdit) []error {
	var errs []error
	seen := map[string]int{}
	for i, e := range edits {
		add := func(f string, a ...any) {
			errs = append(errs, fmt.Errorf("line_edits[%d]: "+f, append([]any{i}, a...)...))
		}
		checkEdit(e, add)
		if j, ok := seen[k.ID(e)]; ok {
			add("edits the same line of %s as line_edits[%d]", e.Path, j)
		}
		seen[k.ID(e)] = i
	}
	return errs
}

// checkEdit reports what is wrong with one edit on its own.
func checkEdit(e LineEdit, add func(string, ...any)) {
	if !path.IsAbs(e.Path) || path.Clean(e.Path) != e.Path || strings.ContainsAny(e.Path, "\n\r") {
		add("path %q must be a clean absolute path", e.Path)
	}
	if e.Regexp != "" {
		if strings.ContainsAny(e.Regexp, "\n\r") {
			add("regexp must be one line")
		} else if _, err := regexp.CompilePOSIX(e.Regexp); err != nil {
			add("regexp %q is not a POSIX extended regular expression: %v", e.Regexp, err)
		}
	}
	switch {
	case e.Absent && e.Line != "":
		add("line and absent are exclusive: absent removes the lines matching regexp")
	case e.Absent && e.Regexp == "":
		add("absent needs regexp: it removes the lines matching it")
	case !e.Absent && e.Line == "":
		add("line is required (or absent = true with regexp)")
	}
	if strings.ContainsAny(e.Line, "\n\r") {
		add("line must be one line, without newline")
	}
	if e.Section != "" && !reINISection.MatchString(e.Section) {
		add("section %q must be a plain INI section name, without brackets", e.Section)
	}
	if e.Create && e.Absent {
		add("create with absent: a file created empty holds no line to remove")
	}
}

//go:embed lines.sh
var shell string

// Shell implements content.Kind: lines.sh.
func (Kind) Shell() string { return shell }

// Install edits the lines in order, with lines.sh's fatimage_line_edit.
func (Kind) Install(_ content.Env, edits []LineEdit) (content.Script, error) {
	// content.sh: umask 022 for a file created, as for all content
	sc := content.Script{Say: fmt.Sprintf("line edits (%d)", len(edits)), Bodies: []string{"content"}}
	for i, e := range edits {
		mode := "present"
		if e.Absent {
			mode = "absent"
		}
		sc.Call("fatimage_line_edit", fmt.Sprintf("line_edits[%d]", i), e.Path, mode, e.Regexp, e.Line, e.Section, content.Flag(e.Create))
	}
	return sc, nil
}
