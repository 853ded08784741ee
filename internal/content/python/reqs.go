package python

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// requirement is one requirement and where it was written, for errors.
type requirement struct {
	text  string
	where string // "" for an inline one, else "<file> line <n>"
}

// requirements are the inline requirements, then requirements_file's,
// each with the file and line it starts on.
func (e PythonEnv) requirements() ([]requirement, error) {
	var out []requirement
	for _, r := range e.Requirements {
		out = append(out, requirement{text: r})
	}
	if e.RequirementsFile == "" {
		return out, nil
	}
	data, err := os.ReadFile(e.RequirementsFile)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	cur, n, start := "", 0, 0
	for sc.Scan() {
		n++
		if cur == "" {
			start = n
		}
		l := strings.TrimSpace(sc.Text())
		if i := strings.Index(l, " #"); i >= 0 {
			l = strings.TrimSpace(l[:i])
		}
		if strings.HasPrefix(l, "#") {
			l = ""
		}
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSpace(strings.TrimSuffix(l, "\\")) + " "
			continue
		}
		cur += l
		if strings.TrimSpace(cur) != "" {
			out = append(out, requirement{strings.TrimSpace(cur), fmt.Sprintf("%s line %d", e.RequirementsFile, start)})
		}
		cur = ""
	}
	return out, sc.Err()
}

// Python requirements pinned to a git tag or commit (issue #15: the
// appliance installs slurm-openstack-tools from its git tag v3.0). Two
// forms, as pip takes them: PEP 508's `name @ git+https://host/repo.git@ref`
// and pip's `git+https://host/repo.git@ref#egg=name`. The VM's pip clones
// the repository at the ref and builds it; the commit the ref resolved to
// (pip's direct_url.json) is recorded in image.json.

var (
	reGitPEP508 = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*)\s*@\s*git\+(https?://[^\s@#]+)@([^\s@#/]+)$`)
	reGitEgg    = regexp.MustCompile(`^git\+(https?://[^\s@#]+)@([^\s@#/]+)#egg=([A-Za-z0-9][A-Za-z0-9._-]*)$`)
	reCommitID  = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// GitRequirement is a requirement pinned to a git ref.
type GitRequirement struct {
	Name, URL, Ref string
}

// ParseGitRequirement reads either form; ok is false for anything else.
func ParseGitRequirement(l string) (GitRequirement, bool) {
	if m := reGitPEP508.FindStringSubmatch(l); m != nil {
		return GitRequirement{m[1], m[2], m[3]}, true
	}
	if m := reGitEgg.FindStringSubmatch(l); m != nil {
		return GitRequirement{m[3], m[1], m[2]}, true
	}
	return GitRequirement{}, false
}

// looksGit reports whether a requirement means to be a git one (then a
// malformed one is said so, not taken for a bad name==version pin).
func looksGit(l string) bool { return strings.Contains(l, "git+") }

// requirementPin is a requirement as image.json's pins record it: the
// name==version without hashes, or the whole git requirement.
func requirementPin(l string) string {
	if g, ok := ParseGitRequirement(l); ok {
		return g.Name + " @ git+" + g.URL + "@" + g.Ref
	}
	return strings.Fields(l)[0]
}

// GitRequirements are e's git requirements, in order.
func (e PythonEnv) GitRequirements() []GitRequirement {
	lines, _ := e.RequirementLines()
	var out []GitRequirement
	for _, l := range lines {
		if g, ok := ParseGitRequirement(l); ok {
			out = append(out, g)
		}
	}
	return out
}
