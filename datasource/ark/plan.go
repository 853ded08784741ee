package ark

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/pulp"
	"github.com/stackhpc/packer-plugin-fatimage/internal/timestamps"
)

// task is one entry to resolve. forOS marks the entries that make up the
// `repos` output; the others are resolved for `timestamps_yaml` only.
type task struct {
	entry      timestamps.Entry
	contentURL string
	forOS      bool
}

// planTasks merges the file's entries with the repo blocks and decides
// which entries to resolve.
func (c *Config) planTasks(add func(string, ...any)) {
	if c.TimestampsFile == "" && len(c.Repos) == 0 {
		add("no repositories: set timestamps_file or appliance_dir, or add repo blocks")
		return
	}
	known := c.checkRepoBlocks(add)
	c.checkOnlySkip(known, add)
	chosen, fromBlock := c.chooseForOS(known, add)
	if len(chosen) == 0 {
		add("os_version: no repository has an entry for %s", strings.Join(quoteAll(timestamps.VersionKeys(c.OSVersion)), " or "))
		return
	}

	// Every entry of the file is resolved too, so timestamps_yaml carries
	// fresh pins for all the OS versions it holds.
	entries := c.file.Entries()
	for _, e := range chosen {
		if !slices.ContainsFunc(entries, func(x timestamps.Entry) bool { return x.Key() == e.Key() }) {
			entries = append(entries, e)
		}
	}
	anyWanted := false
	for _, e := range entries {
		if ce, ok := chosen[e.Key()]; ok {
			e = ce
		}
		if !c.wanted(e.Repo) {
			continue
		}
		anyWanted = true
		_, forOS := chosen[e.Key()]
		if t, ok := c.planEntry(e, fromBlock[e.Key()], add); ok {
			t.forOS = forOS
			c.plan = append(c.plan, t)
		}
	}
	if !anyWanted {
		add("only/skip: every repository is left out")
	}
}

// checkRepoBlocks checks each repo block on its own and returns every
// repository name known: the file's, then the blocks' new ones.
func (c *Config) checkRepoBlocks(add func(string, ...any)) []string {
	known := c.file.Repos()
	seen := map[string]bool{}
	for i, r := range c.Repos {
		field := fmt.Sprintf("repo[%d]", i)
		switch {
		case r.Name == "":
			add("%s.name: required", field)
			continue
		case seen[r.Name]:
			add("%s.name: repository %q is given twice", field, r.Name)
			continue
		}
		seen[r.Name] = true
		if !slices.Contains(known, r.Name) {
			known = append(known, r.Name)
		}
		if r.Path != "" {
			if err := checkRepoPath(r.Path); err != nil {
				add("%s.path: %v", field, err)
			}
		}
		if r.ContentURL != "" {
			if err := checkContentURL(r.ContentURL); err != nil {
				add("%s.content_url: %v", field, err)
			}
		}
		if r.Timestamp != "" {
			if _, err := pulp.ParseTimestamp(r.Timestamp); err != nil {
				add("%s.timestamp: %v", field, err)
			}
		}
	}
	return known
}

// checkOnlySkip rejects names in only and skip that no repository has: a
// typo there would silently resolve the wrong set.
func (c *Config) checkOnlySkip(known []string, add func(string, ...any)) {
	for _, list := range []struct {
		name  string
		names []string
	}{{"only", c.Only}, {"skip", c.Skip}} {
		for _, n := range list.names {
			if !slices.Contains(known, n) {
				add("%s: no repository named %q (known: %s)", list.name, n, strings.Join(known, ", "))
			}
		}
	}
}

// wanted tells whether only and skip keep the repository name.
func (c *Config) wanted(name string) bool {
	return (len(c.Only) == 0 || slices.Contains(c.Only, name)) && !slices.Contains(c.Skip, name)
}

// chooseForOS returns the entries that serve os_version, by key, with
// blocks applied on top, and which of them took their path from a repo
// block (and so had it checked there).
func (c *Config) chooseForOS(known []string, add func(string, ...any)) (chosen map[string]timestamps.Entry, fromBlock map[string]bool) {
	chosen = map[string]timestamps.Entry{}
	fromBlock = map[string]bool{}
	for _, name := range known {
		e, found := c.file.Lookup(name, c.OSVersion)
		if i := slices.IndexFunc(c.Repos, func(r RepoConfig) bool { return r.Name == name }); i >= 0 {
			e = overlay(e, found, c.OSVersion, c.Repos[i])
			fromBlock[e.Key()] = c.Repos[i].Path != ""
			if e.PulpPath == "" {
				add("repo[%d].path: required, as the timestamps file has no %q entry for %s", i, name, c.OSVersion)
				continue
			}
			found = true
		}
		if found {
			chosen[e.Key()] = e
		}
	}
	return chosen, fromBlock
}

// planEntry checks an entry to resolve and makes its task; ok is false
// when it has a problem, reported through add. pathChecked skips the path
// check a repo block already made, so its error is not given twice.
func (c *Config) planEntry(e timestamps.Entry, pathChecked bool, add func(string, ...any)) (t task, ok bool) {
	where := fmt.Sprintf("repo %q (%s)", e.Repo, e.Version)
	if err := checkRepoPath(e.PulpPath); err != nil && !pathChecked {
		add("%s: pulp_path: %v", where, err)
		return task{}, false
	}
	if c.mode == pulp.ModePinned && e.PulpTimestamp == "" {
		why := ""
		if c.Mode == "" {
			why = ", the default with a timestamps file"
		}
		add("%s: mode is \"pinned\"%s, but no timestamp is given: set timestamp in its repo block or pulp_timestamp in the timestamps file, or mode = \"latest\" for the newest snapshots", where, why)
		return task{}, false
	}
	if e.PulpTimestamp != "" {
		if _, err := pulp.ParseTimestamp(e.PulpTimestamp); err != nil {
			add("%s: pulp_timestamp: %v", where, err)
			return task{}, false
		}
	}
	contentURL := c.ContentURL
	if e.ContentURL != "" {
		contentURL = e.ContentURL
		if err := checkContentURL(contentURL); err != nil {
			add("%s: pulp_content_url: %v", where, err)
			return task{}, false
		}
	}
	return task{entry: e, contentURL: contentURL}, true
}

// overlay applies a repo block to the file's entry (if any) for osVersion.
func overlay(e timestamps.Entry, found bool, osVersion string, r RepoConfig) timestamps.Entry {
	if !found {
		e = timestamps.Entry{Repo: r.Name, Version: osVersion, RepoFile: r.Name}
	}
	for dst, src := range map[*string]string{
		&e.PulpPath: strings.Trim(r.Path, "/"), &e.RepoFile: r.RepoFile, &e.RepoName: r.RepoName,
		&e.ContentURL: r.ContentURL, &e.PulpTimestamp: r.Timestamp,
	} {
		if src != "" {
			*dst = src
		}
	}
	if r.GPGCheck != nil {
		e.GPGCheck = r.GPGCheck
	}
	return e
}
