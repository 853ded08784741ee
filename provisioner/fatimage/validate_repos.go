package fatimage

import (
	"regexp"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/pulp"
)

var (
	reRepoFile = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	reSection  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)
	reOptKey   = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
)

// validateRepos checks the repositories, their credentials, the GPG
// keys and enable_repos.
func validateRepos(c *Config, p *plan) []error {
	var errs problems
	if len(p.repos) > 0 {
		if p.repoUsername != "" && p.repoPassword == "" {
			errs.add("repo_password: must be set when repo_username is set (or set ARK_PASSWORD)")
		}
		if p.repoPassword != "" && p.repoUsername == "" {
			errs.add("repo_username: must be set when repo_password is set (or set ARK_USERNAME)")
		}
	}
	for i, r := range p.repos {
		if pulp.NeedsCredentials(r.BaseURL) && (p.repoUsername == "" || p.repoPassword == "") {
			errs.add("repos[%d]: %s needs credentials; set repo_username and repo_password (or ARK_USERNAME and ARK_PASSWORD)", i, withoutUserInfo(r.BaseURL))
			break
		}
	}
	sections := map[string]bool{}
	for i, r := range p.repos {
		if r.BaseURL == "" {
			errs.add("repos[%d]: baseurl is required", i)
		} else if !strings.HasPrefix(r.BaseURL, "http://") && !strings.HasPrefix(r.BaseURL, "https://") && !strings.HasPrefix(r.BaseURL, "file://") {
			errs.add("repos[%d]: baseurl %q must start with http://, https:// or file://", i, withoutUserInfo(r.BaseURL))
		} else if msg := checkRepoURL(i, r.BaseURL); msg != "" {
			errs.add("%s", msg)
		}
		if !reRepoFile.MatchString(r.RepoFile) {
			errs.add("repos[%d]: repo_file %q must be a plain file name without .repo (letters, digits, . _ -)", i, r.RepoFile)
		}
		if !reSection.MatchString(r.RepoName) {
			errs.add("repos[%d]: repo_name %q must be a non-empty section name (letters, digits, . _ : -)", i, r.RepoName)
		}
		if k := r.RepoFile + "\x00" + r.RepoName; sections[k] {
			errs.add("repos[%d]: duplicate section [%s] in %s.repo", i, r.RepoName, r.RepoFile)
		} else {
			sections[k] = true
		}
		if r.Credentials != "" && r.Credentials != "none" {
			errs.add("repos[%d]: credentials %q must be \"none\" or empty", i, r.Credentials)
		}
		if r.Priority < 0 || r.Priority > 99 {
			errs.add("repos[%d]: priority %d must be between 1 and 99 (0 or unset: no priority line)", i, r.Priority)
		}
		for k, v := range r.Options {
			if !reOptKey.MatchString(k) || isReservedKey(k) {
				errs.add("repos[%d]: options key %q is not allowed", i, k)
			}
			if strings.ContainsAny(v, "\n\r") {
				errs.add("repos[%d]: options value for %q must be one line", i, k)
			}
		}
		for _, s := range []string{r.BaseURL, r.Name} {
			if strings.ContainsAny(s, "\n\r") {
				errs.add("repos[%d]: values must be one line", i)
			}
		}
	}
	for _, o := range [][2]string{{"repo_username", p.repoUsername}, {"repo_password", p.repoPassword}} {
		if msg := content.CheckCredential(o[0], o[1]); msg != "" {
			errs.add("%s", msg)
		}
	}
	for i, r := range c.EnableRepos {
		if !reSection.MatchString(r) {
			errs.add("enable_repos[%d]: %q is not a valid repo id", i, r)
		}
	}
	return errs
}
