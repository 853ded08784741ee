package fatimage

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/containers"
)

// Every URL option goes through checkURL (or, for a repository's baseurl,
// which may also be file://, through urlCredentials): a URL carrying
// user info would put its credentials in the build output, in errors and
// in a command line on the VM, so it is refused in favour of the
// credential options, which travel only in files on the tmpfs.

// The checks themselves are internal/content's (check.go), shared with
// the content kinds' packages.
func checkURL(field, s string) string { return content.CheckURL(field, s) }

func urlCredentials(field string, u *url.URL, instead string) string {
	return content.URLCredentials(field, u, instead)
}

func withoutUserInfo(s string) string { return content.WithoutUserInfo(s) }

// urlOptions are the built-in groups' mirror URL options, by name; the
// other top-level URL options are checked with what they serve
// (release_base_url with binaries, grafana_* with the Grafana content,
// netlib_url with the content kinds).
func (c *Config) urlOptions() [][2]string {
	return [][2]string{
		{"git_base_url", c.GitBaseURL},
		{"github_releases_url", c.GitHubReleasesURL},
		{"python_index_url", c.PythonIndexURL},
		{"rstudio_download_url", c.RStudioDownloadURL},
	}
}

// validateURLs checks the mirror URL options that are set.
func validateURLs(c *Config, _ *plan) []error {
	var errs problems
	for _, o := range c.urlOptions() {
		if o[1] == "" {
			continue
		}
		if msg := checkURL(o[0], o[1]); msg != "" {
			errs.add("%s", msg)
		}
	}
	for _, msg := range c.httpPythonIndexes() {
		errs.add("%s", msg)
	}
	if r := c.ContainerRegistry; r != "" && !containers.ValidRegistry(r) {
		errs.add("container_registry %q must be host or host:port (no scheme, path or user info: credentials go in container_registries)", withoutUserInfo("//" + r)[2:])
	}
	return errs
}

// checkRepoURL is the problem with repos[i]'s baseurl (whose scheme is
// checked already), "" when none.
func checkRepoURL(i int, s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Sprintf("repos[%d]: baseurl %q is not a URL", i, withoutUserInfo(s))
	}
	return urlCredentials(fmt.Sprintf("repos[%d]: baseurl", i), u, "set repo_username and repo_password (or ARK_USERNAME and ARK_PASSWORD), which travel only in files on the tmpfs")
}

// httpPythonIndexes refuses every plain-http Python index unless the
// template accepted them (python_index_insecure): pip would trust the
// host and install whatever it, or anyone on the way, serves.
func (c *Config) httpPythonIndexes() []string {
	if c.PythonIndexInsecure {
		return nil
	}
	const why = "is plain http: pip would trust the host (--trusted-host) and what it serves is not verified unless pinned by hash; use https, or set python_index_insecure = true to accept it"
	var out []string
	if strings.HasPrefix(c.PythonIndexURL, "http://") {
		out = append(out, fmt.Sprintf("python_index_url %s %s", withoutUserInfo(c.PythonIndexURL), why))
	}
	for i, e := range c.templateContent().PythonEnvs {
		for _, o := range [][2]string{{"index_url", e.IndexURL}, {"extra_index_url", e.ExtraIndexURL}} {
			if strings.HasPrefix(o[1], "http://") {
				out = append(out, fmt.Sprintf("python_envs[%d]: %s %s %s", i, o[0], withoutUserInfo(o[1]), why))
			}
		}
	}
	return out
}
