package fatimage

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// What the build installs without checking it, said as a WARNING in the
// build output (issue #26, supply chain); image.json records what was
// installed (the snapshots, the git commits).

// repoWarnings flag the repositories whose packages dnf installs
// without checking their signatures.
func (p *plan) repoWarnings() []string {
	var out []string
	for i, r := range p.repos {
		if !r.GPGCheck {
			out = append(out, fmt.Sprintf("repos[%d] (%s): gpgcheck = false: the signatures of its packages are not verified", i, r.RepoName))
		}
	}
	enabled := enabledRepoIDs(p.repos)
	for _, g := range p.sets.groups {
		for _, r := range g.NoGPGCheckRepos {
			if slices.Contains(enabled, r) {
				out = append(out, fmt.Sprintf("group %s installs the packages of repository %s with GPG checks off (--nogpgcheck): their signatures are not verified", g.Name, r))
			}
		}
	}
	return out
}

// pythonWarnings flag a plain-http index (pip is told to trust its
// host, so nothing checks what it serves but hash pins) and an
// environment with a git requirement (pip then checks no hash in it) or
// without hashes.
func pythonWarnings(es []PythonEnv) []string {
	var out []string
	for i, e := range es {
		for _, o := range [][2]string{{"index_url", e.indexURL()}, {"extra_index_url", e.ExtraIndexURL}} {
			if u, err := url.Parse(o[1]); err == nil && u.Scheme == "http" {
				out = append(out, fmt.Sprintf("python_envs[%d]: %s %s is plain http: pip trusts the host (--trusted-host) and what it serves is not verified unless pinned by hash", i, o[0], o[1]))
			}
		}
		if g := e.gitRequirements(); len(g) > 0 {
			out = append(out, fmt.Sprintf("python_envs[%d]: %s is a git requirement: pip verifies no hash in %s (the commit installed is recorded in image.json)", i, g[0].Name, e.label()))
		} else if !e.hashed() {
			out = append(out, fmt.Sprintf("python_envs[%d]: the requirements of %s carry no --hash: the pinned versions (recorded in image.json) are installed, their content not verified", i, e.label()))
		}
	}
	return out
}

// hashed reports whether e's requirements carry hashes (then all do:
// validation refuses a mix).
func (e PythonEnv) hashed() bool {
	lines, _ := e.requirements()
	for _, l := range lines {
		if strings.Contains(l.text, "--hash=") {
			return true
		}
	}
	return false
}
