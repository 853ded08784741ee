package fatimage

import (
	"context"
	"fmt"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/keys"
)

// stepRepos writes the GPG keys and the repositories, disables every
// other repository (replace_repos) and loads the new ones' metadata.
func stepRepos(ctx context.Context, s *state) error {
	c, p := s.cfg, s.plan
	s.say("repositories")
	if msg := sitePulpSummary(p.repos); msg != "" {
		s.ui.Say(msg)
	}
	for _, r := range p.repos {
		if r.Warning != "" {
			s.say(fmt.Sprintf("WARNING: repository %s: %s", r.Name, r.Warning))
		}
	}
	for _, w := range p.repoWarnings() {
		s.say("WARNING: " + w)
	}
	// no credentials here: only the names and sections matter
	repoFiles := renderRepoFiles(p.repos, "", "", false)
	// (import_os_key uses the gpg_keys kind's import_key)
	sc := newScript("repofiles", "repos", kindBody(keys.Kind{}))
	if len(p.repos) > 0 && *c.ImportOSKey {
		sc.call("import_os_key")
	}
	ks, err := keys.Script(s.workDir, repoNames(p.repos), p.GPGKeys)
	if err != nil {
		return err
	}
	if err := s.stage(sc, stagedFiles(ks.Staged)...); err != nil {
		return err
	}
	addCalls(sc, ks)
	// /etc/yum.repos.d never receives a credential (its old blocks would
	// stay in the snapshot): dnf reads our repositories from the tmpfs
	// secret dir during the build, and disable-repos writes them back
	// without credentials.
	stripRepoFiles(sc, repoFiles, *c.ReplaceRepos)
	if *c.ReplaceRepos && len(repoFiles) > 0 {
		sc.call("disable_other_repos", repoFileNames(repoFiles)...)
	}
	// No metadata load here (a dnf process more): the package
	// transaction's first dnf command loads it before any package work, so
	// wrong credentials or a missing snapshot still fail the build early,
	// with an error naming repo_username and repo_password.
	if sc.empty() {
		return nil
	}
	_, err = s.runScript(ctx, sc)
	return err
}

// repoNames are the names of repos (or their sections): what the
// built-in keys are found by.
func repoNames(repos []Repo) []string {
	var out []string
	for _, r := range repos {
		name := r.Name
		if name == "" {
			name = r.RepoName
		}
		out = append(out, name)
	}
	return out
}

// enabledRepoIDs are the sections of repos enabled for the build.
func enabledRepoIDs(repos []Repo) []string {
	var ids []string
	for _, r := range repos {
		if r.Enabled == nil || *r.Enabled {
			ids = append(ids, r.RepoName)
		}
	}
	return ids
}

// sitePulpSummary reports what the data source's site_pulp did, since
// Packer shows data sources' progress only in its log.
func sitePulpSummary(repos []Repo) string {
	var created, reused []string
	for _, r := range repos {
		switch r.SitePulp {
		case "created":
			created = append(created, r.Name)
		case "reused":
			reused = append(reused, r.Name)
		}
	}
	if len(created)+len(reused) == 0 {
		return ""
	}
	msg := fmt.Sprintf("fatimage: site Pulp: %d snapshots synced now, %d already served", len(created), len(reused))
	if len(created) > 0 {
		msg += " (synced: " + strings.Join(created, ", ") + ")"
	}
	return msg
}
