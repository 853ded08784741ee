package fatimage

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// sourceRoles are the appliance roles that run `dnf download --source`
// (slurm_recompile: the installed Slurm's SRPM), which enables the
// -source section of every enabled repository. A section the build did
// not write is the base image's, at Rocky's or Fedora's public mirrors:
// without internet access dnf fails on its metadata, in a trace that
// names neither the role nor the fix.
var sourceRoles = map[string]bool{"slurm_recompile": true}

// sourceSectionLine is one line foreign_source_sections prints.
var sourceSectionLine = regexp.MustCompile(`^\S+\.repo \[[^]]+\]$`)

// foreignSources says, before a step of sourceRoles runs, which -source
// sections its dnf would enable that are not the build's: "" when there
// are none (the build's repos have the snapshots' -source repositories,
// as a site's dnf_repo_timestamps.yml does). Read from the repository
// files, not from dnf's output.
func (s *state) foreignSources(ctx context.Context, st applianceStep) (string, error) {
	if st.Kind != "role" || !sourceRoles[st.Name] {
		return "", nil
	}
	var ids []string
	for _, r := range s.plan.repos {
		if r.Enabled == nil || *r.Enabled {
			ids = append(ids, r.RepoName)
		}
	}
	sc := newScript("repofiles")
	sc.call("foreign_source_sections", ids...)
	out, err := s.runScriptQuiet(ctx, "sources", sc)
	if err != nil {
		return "", err
	}
	return sourcesHint(st.Name, out), nil
}

// sourcesHint is the message naming the sections foreign_source_sections
// printed in out for role, "" when it printed none.
func sourcesHint(role, out string) string {
	var found []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); sourceSectionLine.MatchString(l) {
			found = append(found, l)
		}
	}
	if len(found) == 0 {
		return ""
	}
	return fmt.Sprintf("role %s: its dnf download --source enables the -source section of every enabled repository, "+
		"and these are not the build's but the base image's, at its own mirrors (unreachable without internet access): %s; "+
		"give the snapshots' source repositories in repos (the appliance's dnf_repo_timestamps.yml has baseos-source, "+
		"appstream-source, crb-source, extras-source and epel-source; the fatimage-ark data source gives them unless only or skip leaves them out)",
		role, strings.Join(found, ", "))
}
