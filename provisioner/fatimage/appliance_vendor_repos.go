package fatimage

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/fetch"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// The extra builds' vendor repositories from the site's appliance: with
// appliance_environment, a group's needs_repos entry naming a variable
// (doca_repo_url, cuda_repo_url) is configured from that variable's value
// as the group's role adds the repository, so a site's mirror is an
// override in its group_vars and the template gives no `repos` entry.
// Such repositories carry no Ark credentials: they are the vendors'.

// vendorRepoSources are the needs_repos entries with a variable of the
// built-in groups in names, in group order.
func vendorRepoSources(names []string) []vendorSource {
	byGroup := packagesets.ApplianceRepos()
	var out []vendorSource
	for _, g := range names {
		for _, r := range byGroup[g] {
			if !slices.ContainsFunc(out, func(v vendorSource) bool { return v.Name == r.Name }) {
				out = append(out, vendorSource{group: g, NeededRepo: r})
			}
		}
	}
	return out
}

// vendorSource is a group's repository from an appliance variable.
type vendorSource struct {
	group string
	packagesets.NeededRepo
}

// url is the source's variable as the site's Ansible resolved it.
func (av *applianceValues) vendorURL(v vendorSource) (string, error) {
	val, defined, err := av.look.Value(v.Role, v.Var)
	if err != nil || !defined {
		return "", fmt.Errorf("the site's appliance: group %q: repository %s: %s: %v", v.group, v.Name, v.Var, orUndefined(err))
	}
	s, ok := val.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("the site's appliance: group %q: repository %s: %s is not a URL (%v)", v.group, v.Name, v.Var, val)
	}
	return strings.TrimSpace(s), nil
}

// vendorRepos are the repositories of the groups' sources, made as their
// roles add them; applied records each variable and the URL it gave.
func (av *applianceValues) vendorRepos(groups []packagesets.Group) ([]Repo, []packagesets.Applied, error) {
	var names []string
	for _, g := range groups {
		names = appendUnique(names, g.Name)
	}
	major, _, _ := av.look.Value("", factMajor)
	var out []Repo
	var applied []packagesets.Applied
	var errs []error
	for _, v := range vendorRepoSources(names) {
		u, err := av.vendorURL(v)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		file := strings.ReplaceAll(v.RepoFile, "{os_major}", fmt.Sprint(major))
		var repos []Repo
		if v.From == "baseurl" {
			repos = []Repo{{Name: v.Name, RepoFile: file, RepoName: v.Name, BaseURL: u, GPGCheck: v.GPGCheck}}
		} else {
			text, ok := av.repoFiles[u]
			if !ok {
				errs = append(errs, fmt.Errorf("the site's appliance: group %q: %s %s was not fetched", v.group, v.Var, u))
				continue
			}
			if repos, err = parseRepoFile(text, file); err != nil {
				errs = append(errs, fmt.Errorf("the site's appliance: group %q: %s (%s): %w", v.group, v.Var, u, err))
				continue
			}
		}
		for i := range repos {
			repos[i].Credentials = "none"
			boolDefault(&repos[i].Enabled, true)
		}
		out = append(out, repos...)
		applied = append(applied, packagesets.Applied{Group: v.group, Values: []string{u},
			ApplianceVar: packagesets.ApplianceVar{Into: "repos/" + v.Name, Var: v.Var, Role: v.Role}})
	}
	return out, applied, errors.Join(errs...)
}

// parseRepoFile reads a .repo file (dnf's INI) into one repository per
// section, written to file: baseurl, enabled, gpgcheck, priority and
// module_hotfixes as such, every other key (gpgkey, ...) as it is.
func parseRepoFile(text, file string) ([]Repo, error) {
	var out []Repo
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
			continue
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			id := strings.TrimSpace(line[1 : len(line)-1])
			out = append(out, Repo{Name: id, RepoName: id, RepoFile: file, Options: map[string]string{}})
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || len(out) == 0 {
			return nil, fmt.Errorf("line %d: %q is neither a [section] nor a key = value of one", n, line)
		}
		if err := setRepoKey(&out[len(out)-1], strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no [section]: not a .repo file")
	}
	for _, r := range out {
		if r.BaseURL == "" {
			return nil, fmt.Errorf("section %s has no baseurl", r.RepoName)
		}
	}
	return out, nil
}

func setRepoKey(r *Repo, k, v string) error {
	switch k {
	case "baseurl":
		r.BaseURL = v
	case "enabled":
		on := truthy(v)
		r.Enabled = &on
	case "gpgcheck":
		r.GPGCheck = truthy(v)
	case "priority":
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("priority %q: %w", v, err)
		}
		r.Priority = n
	case "module_hotfixes":
		r.ModuleHotfixes = truthy(v)
	case "name":
		// the plugin names a section by its id, as for every repository
	default:
		r.Options[k] = v
	}
	return nil
}

// fetchVendorRepoFiles fetches, through the plugin's one fetch path on
// the build host, the .repo files the build host's groups take from the
// site's appliance (cuda_repo_url), by URL. The role's get_url fetches
// it on the VM; the plugin parses it into `repos` entries, so it is
// written, used and disabled in the image as every other repository.
func (s *state) fetchVendorRepoFiles(ctx context.Context, av *applianceValues, groups []string) (map[string]string, error) {
	out := map[string]string{}
	f := s.fetcher(false)
	for _, v := range vendorRepoSources(groups) {
		if v.From != "repo_file" {
			continue
		}
		u, err := av.vendorURL(v)
		if err != nil {
			return nil, err
		}
		r, err := f.Get(ctx, fetch.Item{What: fmt.Sprintf("group %q: %s", v.group, v.Var), URL: u})
		if err != nil {
			return nil, fmt.Errorf("the site's appliance: %w", err)
		}
		data, err := os.ReadFile(r.Path)
		if err != nil {
			return nil, err
		}
		out[u] = string(data)
	}
	return out, nil
}
