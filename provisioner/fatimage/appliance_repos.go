package fatimage

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// The facts that choose an extra repository's entry, as the dnf_repos
// role chooses it: the OS version's when there is one, else the major's.
const (
	factVersion = "ansible_distribution_version"
	factMajor   = "ansible_distribution_major_version"
)

// extraRepos are the site's dnf_repos_extra repositories for the build
// VM's OS, as the appliance's dnf_repos role writes them.
func (av *applianceValues) extraRepos() ([]Repo, error) {
	src := packagesets.ApplianceExtraRepos()
	v, defined, err := av.look.Value("", src.Var)
	if err != nil || !defined {
		return nil, fmt.Errorf("the site's appliance: %s: %v", src.Var, orUndefined(err))
	}
	extra, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the site's appliance: %s: not a mapping", src.Var)
	}
	version, _, _ := av.look.Value("", factVersion)
	major, _, _ := av.look.Value("", factMajor)
	var out []Repo
	for _, key := range slices.Sorted(maps.Keys(extra)) {
		byOS, _ := extra[key].(map[string]any)
		vals, ok := byOS[fmt.Sprint(version)].(map[string]any)
		if !ok {
			vals, _ = byOS[fmt.Sprint(major)].(map[string]any)
		}
		if len(vals) == 0 {
			continue // the role skips a repository without values for the OS
		}
		r, err := av.extraRepo(key, vals, src.ContentURL)
		if err != nil {
			return nil, fmt.Errorf("the site's appliance: %s.%s: %w", src.Var, key, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func (av *applianceValues) extraRepo(key string, vals map[string]any, contentURLVar string) (Repo, error) {
	str := func(k string) string { s, _ := vals[k].(string); return s }
	r := Repo{Name: key, RepoName: key, RepoFile: str("repo_file"), Path: str("pulp_path"), GPGCheck: true}
	if ts, _ := packagesets.Strings(vals["pulp_timestamp"]); len(ts) == 1 {
		r.Timestamp = ts[0]
	}
	if n := str("repo_name"); n != "" {
		r.RepoName = n
	}
	if g, ok := vals["gpgcheck"]; ok {
		r.GPGCheck = truthy(g)
	}
	base := str("pulp_content_url")
	if base == "" {
		v, defined, err := av.look.Value("", contentURLVar)
		if err != nil || !defined {
			return r, fmt.Errorf("no pulp_content_url and %s: %v", contentURLVar, orUndefined(err))
		}
		base, _ = v.(string)
	}
	if r.Path == "" || r.Timestamp == "" || r.RepoFile == "" {
		return r, fmt.Errorf("pulp_path, pulp_timestamp and repo_file are needed")
	}
	r.BaseURL = strings.TrimSuffix(base, "/") + "/" + strings.Trim(r.Path, "/") + "/" + r.Timestamp
	enabled := true
	r.Enabled = &enabled
	return r, nil
}

// withExtraRepos are repos with the site's extra ones: one of the same
// section replaces the `repos` entry (the role's combine), the others
// follow.
func withExtraRepos(repos, extra []Repo) []Repo {
	out := slices.Clone(repos)
	for _, e := range extra {
		if i := slices.IndexFunc(out, func(r Repo) bool { return r.RepoName == e.RepoName }); i >= 0 {
			out[i] = e
			continue
		}
		out = append(out, e)
	}
	return out
}
