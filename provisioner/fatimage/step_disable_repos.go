package fatimage

import "context"

// stepDisableRepos rewrites the repositories disabled and without
// credentials, disables every other one and checks no password is left;
// with disable_repos = false it warns when credentials stay behind.
func stepDisableRepos(ctx context.Context, s *state) error {
	c := s.cfg
	if !*c.DisableRepos {
		if w := c.credentialsLeftWarning(); w != "" {
			s.ui.Say(w)
		}
		return nil
	}
	s.say("disabling repositories")
	repoFiles := renderRepoFiles(c.repos, "", "", true)
	files := []staged{{"pw", nil}}
	if c.RepoPassword != "" {
		files[0].Data = []byte(c.RepoPassword + "\n")
	}
	for _, f := range repoFiles {
		files = append(files, staged{f.Name, []byte(f.Content)})
	}
	sc := newScript("repofiles", "disable-repos")
	if err := s.stage(sc, files...); err != nil {
		return err
	}
	installRepoFiles(sc, repoFiles, s.workDir, true)
	sc.call("remove_repo_copies")
	sc.call("disable_other_repos", repoFileNames(repoFiles)...)
	sc.call("verify_repos_clean", s.inWorkDir("pw"))
	_, err := s.runScript(ctx, sc)
	return err
}
