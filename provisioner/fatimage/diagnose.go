package fatimage

import (
	"fmt"
	"regexp"
	"strings"
)

// dnf's output parsed for an error headline naming the cause. dnf prints
// the cause somewhere in a long output (a whole repository configuration
// for a signature failure), rarely on its last line.

var (
	// Errors during downloading metadata for repository 'baseos':
	//   - Status code: 403 for https://.../repodata/repomd.xml (IP: 10.0.0.1)
	reMetadataRepo   = regexp.MustCompile(`^Errors during downloading metadata for repository '([^']+)':`)
	reMetadataStatus = regexp.MustCompile(`^\s*- Status code: (\d+) for (\S+)`)
	// Error: Failed to download metadata for repo 'baseos': Cannot download repomd.xml: ...
	reMetadataFailed = regexp.MustCompile(`^Error: Failed to download metadata for repo '([^']+)': (.*)$`)
	// No match for argument: foo
	reNoMatch = regexp.MustCompile(`^No match for argument: (.+)$`)
	// Error: Unable to find a match: foo bar
	reUnableToMatch = regexp.MustCompile(`^Error: Unable to find a match: (.+)$`)
	// missing groups or modules: nodejs:99
	reMissingModules = regexp.MustCompile(`missing groups or modules: (.+)$`)
	// dnf's signature failure when the repository lists no gpgkey: a
	// lecture on keys, then "Problem repository: [OpenHPC]" and the
	// repository's whole configuration
	reProblemRepo = regexp.MustCompile(`^Problem repository: \[([^\]]+)\]`)
	// Public key for x-1.0-1.noarch.rpm is not installed
	reNoKeyPackage = regexp.MustCompile(`^Public key for (\S+?) is not installed`)
	// a row of dnf's transaction table: " name arch [epoch:]version repo size",
	// the name on a line of its own when it is long
	reTableRow  = regexp.MustCompile(`^ (\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+[\d.]+ [kMG]$`)
	reTableTail = regexp.MustCompile(`^\s+(\S+)\s+(\S+)\s+(\S+)\s+[\d.]+ [kMG]$`)
	reTableName = regexp.MustCompile(`^ (\S+)$`)
)

// packageRepos maps the file names of the packages in dnf's transaction
// table (name-version-release.arch.rpm, as its signature errors name
// them) to their repository.
func packageRepos(lines []string) map[string]string {
	out := map[string]string{}
	add := func(name, arch, evr, repo string) {
		if _, vr, ok := strings.Cut(evr, ":"); ok {
			evr = vr
		}
		out[name+"-"+evr+"."+arch+".rpm"] = repo
	}
	for i, l := range lines {
		if m := reTableRow.FindStringSubmatch(l); m != nil {
			add(m[1], m[2], m[3], m[4])
		} else if m := reTableName.FindStringSubmatch(l); m != nil && i+1 < len(lines) {
			if t := reTableTail.FindStringSubmatch(lines[i+1]); t != nil {
				add(m[1], t[1], t[2], t[3])
			}
		}
	}
	return out
}

// diagnoseDNF returns the causes dnf's output shows, each a headline;
// enabled are the repositories configured for the build, named when
// packages are not found.
func diagnoseDNF(out string, enabled []string) []string {
	lines := strings.Split(strings.ReplaceAll(out, "\r", ""), "\n")
	var causes []string
	causes = append(causes, metadataCauses(lines)...)
	causes = append(causes, noKeyCauses(lines)...)
	causes = append(causes, noMatchCauses(lines, enabled)...)
	return causes
}

// metadataCauses names each repository whose metadata failed to download,
// with the HTTP status and what it means.
func metadataCauses(lines []string) []string {
	var causes []string
	seen := map[string]bool{}
	repo := ""
	for _, l := range lines {
		if m := reMetadataRepo.FindStringSubmatch(l); m != nil {
			repo = m[1]
			continue
		}
		if m := reMetadataStatus.FindStringSubmatch(l); m != nil && repo != "" && !seen[repo] {
			seen[repo] = true
			causes = append(causes, metadataStatusCause(repo, m[1], m[2]))
			continue
		}
		if m := reMetadataFailed.FindStringSubmatch(l); m != nil && !seen[m[1]] {
			seen[m[1]] = true
			causes = append(causes, fmt.Sprintf("repository %q: downloading its metadata failed: %s", m[1], m[2]))
		}
	}
	return causes
}

func metadataStatusCause(repo, status, url string) string {
	switch status {
	case "401", "403":
		return fmt.Sprintf("repository %q: the server refused access (HTTP %s for %s): check repo_username and repo_password (or ARK_USERNAME and ARK_PASSWORD) and that they may read this snapshot", repo, status, url)
	case "404":
		return fmt.Sprintf("repository %q: no repository at its baseurl (HTTP 404 for %s): check the baseurl and that the snapshot exists", repo, url)
	}
	return fmt.Sprintf("repository %q: downloading its metadata failed (HTTP %s for %s)", repo, status, url)
}

// noKeyCauses names the repositories whose packages are signed by a key
// rpm does not have, else the packages. dnf names the repository itself
// only when rpm has no key at all; otherwise (built-in keys imported, but
// not the one that signed) the package's row in the transaction table
// gives it.
func noKeyCauses(lines []string) []string {
	var repos, pkgs []string
	for _, l := range lines {
		if m := reProblemRepo.FindStringSubmatch(l); m != nil {
			repos = appendUnique(repos, m[1])
		} else if m := reNoKeyPackage.FindStringSubmatch(l); m != nil {
			pkgs = appendUnique(pkgs, strings.TrimSuffix(m[1], "."))
		}
	}
	if len(repos) == 0 && len(pkgs) > 0 {
		from := packageRepos(lines)
		var rest []string
		for _, p := range pkgs {
			if r, ok := from[p]; ok {
				repos = appendUnique(repos, r)
			} else {
				rest = append(rest, p)
			}
		}
		if len(rest) > 0 { // a repository not known for every package: name the packages
			repos = nil
		}
	}
	var causes []string
	for _, r := range repos {
		causes = append(causes, fmt.Sprintf("repository %q: packages are signed (gpgcheck = 1) but no key for it is installed: add its key to gpg_keys", r))
	}
	if len(repos) == 0 && len(pkgs) > 0 {
		causes = append(causes, fmt.Sprintf("packages are signed (gpgcheck = 1) but no key for %s is installed: add their repository's key to gpg_keys", strings.Join(pkgs, ", ")))
	}
	return causes
}

// dnfShownOutput is out without what follows a repository configuration
// dump ("Problem repository: [x]" and a line per option): the cause is
// in the headline and the dump's last lines say nothing.
func dnfShownOutput(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if reProblemRepo.MatchString(l) {
			return strings.Join(lines[:i+1], "\n")
		}
	}
	return out
}

// noMatchCauses names the packages or module streams dnf found in none
// of the enabled repositories.
func noMatchCauses(lines []string, enabled []string) []string {
	var pkgs, modules []string
	for _, l := range lines {
		if m := reUnableToMatch.FindStringSubmatch(l); m != nil {
			pkgs = appendUnique(pkgs, strings.Fields(m[1])...)
		} else if m := reNoMatch.FindStringSubmatch(l); m != nil {
			pkgs = appendUnique(pkgs, strings.TrimSpace(m[1]))
		} else if m := reMissingModules.FindStringSubmatch(l); m != nil {
			modules = appendUnique(modules, strings.Fields(strings.ReplaceAll(m[1], ",", " "))...)
		}
	}
	where := "the image's own repositories (no repos configured)"
	if len(enabled) > 0 {
		where = "the configured repositories (" + strings.Join(enabled, ", ") + ")"
	}
	var causes []string
	if len(pkgs) > 0 {
		causes = append(causes, fmt.Sprintf("packages: no match for %s in %s", strings.Join(pkgs, ", "), where))
	}
	if len(modules) > 0 {
		causes = append(causes, fmt.Sprintf("module_streams: no module or group %s in %s", strings.Join(modules, ", "), where))
	}
	return causes
}
