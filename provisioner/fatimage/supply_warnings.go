package fatimage

import (
	"fmt"
	"slices"
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
