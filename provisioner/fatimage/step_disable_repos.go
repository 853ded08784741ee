package fatimage

import "context"

// credentialSweepPaths are where, beside the repository files, the end
// of the build looks for its credentials: where the appliance's proxy
// role writes the site's proxy, URL and credentials, which final.yml's
// play must have taken out again.
var credentialSweepPaths = []string{"/etc/dnf/dnf.conf", "/etc/environment", "/etc/systemd/system.conf.d"}

// stepDisableRepos rewrites the repositories disabled and without
// credentials, disables every other one and checks no password is left;
// with disable_repos = false it warns when credentials stay behind.
func stepDisableRepos(ctx context.Context, s *state) error {
	c, p := s.cfg, s.plan
	if !*c.DisableRepos {
		if w := p.credentialsLeftWarning(); w != "" {
			s.ui.Say(w)
		}
		// asked for: the repositories stay enabled, credentials and all
		s.say("repositories: left enabled (disable_repos = false)")
		repoFiles := renderRepoFiles(p.repos, p.repoUsername, p.repoPassword, false)
		if len(repoFiles) == 0 {
			return nil
		}
		sc := newScript("repofiles")
		for _, f := range repoFiles {
			sc.secret(s.workDir, f.Name, []byte(f.Content))
		}
		installRepoFiles(sc, repoFiles, secretDir(s.workDir), false)
		_, err := s.runScript(ctx, sc)
		return err
	}
	s.say("disabling repositories")
	repoFiles := renderRepoFiles(p.repos, "", "", true)
	var files []staged
	for _, f := range repoFiles {
		files = append(files, staged{f.Name, []byte(f.Content)})
	}
	sc := newScript("repofiles", "disable-repos")
	if err := s.stage(sc, files...); err != nil {
		return err
	}
	var pwData []byte // the check's patterns: on the tmpfs, like every credential
	for _, f := range p.knownSecrets() {
		pwData = append(pwData, f+"\n"...)
	}
	pw := sc.secret(s.workDir, "pw", pwData)
	installRepoFiles(sc, repoFiles, s.workDir, true)
	sc.call("remove_repo_copies")
	sc.call("disable_other_repos", repoFileNames(repoFiles)...)
	sc.call("verify_repos_clean", append([]string{pw}, credentialSweepPaths...)...)
	_, err := s.runScript(ctx, sc)
	return err
}
