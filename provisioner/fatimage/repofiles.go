package fatimage

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

const repoDir = "/etc/yum.repos.d"

// repoFile is the rendered content of one /etc/yum.repos.d file.
type repoFile struct {
	Name     string // file name with .repo
	Content  string
	Sections []string
}

// renderRepoFiles groups repos by repo_file and renders each file. With
// disabled set, every section is enabled = 0 and carries no credentials
// (nor credential options, repo_secrets.go).
func renderRepoFiles(repos []Repo, username, password string, disabled bool) []repoFile {
	var order []string
	byFile := map[string][]Repo{}
	for _, r := range repos {
		if _, ok := byFile[r.RepoFile]; !ok {
			order = append(order, r.RepoFile)
		}
		byFile[r.RepoFile] = append(byFile[r.RepoFile], r)
	}
	var out []repoFile
	for _, f := range order {
		var b strings.Builder
		var sections []string
		b.WriteString("# Written by the packer fatimage provisioner.\n")
		for i, r := range byFile[f] {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(renderSection(r, username, password, disabled))
			sections = append(sections, r.RepoName)
		}
		out = append(out, repoFile{Name: f + ".repo", Content: b.String(), Sections: sections})
	}
	return out
}

// renderSection renders one section with keys sorted as the appliance's
// ini_file output has them.
func renderSection(r Repo, username, password string, disabled bool) string {
	kv := map[string]string{
		"baseurl":  r.BaseURL,
		"gpgcheck": fmt.Sprint(b01(r.GPGCheck)),
		"name":     r.RepoName,
	}
	enabled := r.Enabled == nil || *r.Enabled
	kv["enabled"] = fmt.Sprint(b01(enabled && !disabled))
	if !disabled && username != "" && password != "" && r.Credentials != "none" {
		kv["username"] = username
		kv["password"] = password
	}
	if r.Priority > 0 {
		kv["priority"] = fmt.Sprint(r.Priority)
	}
	if r.ModuleHotfixes {
		kv["module_hotfixes"] = "1"
	}
	for k, v := range r.Options {
		if !isReservedKey(k) && !(disabled && isSecretOption(k)) {
			kv[k] = v
		}
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "[%s]\n", r.RepoName)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %s\n", k, kv[k])
	}
	return b.String()
}

// installRepoFiles adds to sc the calls installing the uploaded repo
// files (in dir, named as the target), keeping the other sections of
// existing files, disabled when disableOthers is set.
func installRepoFiles(sc *vmScript, files []repoFile, dir string, disableOthers bool) {
	for _, f := range files {
		sc.call("install_repo_file", path.Join(dir, f.Name), path.Join(repoDir, f.Name), strings.Join(f.Sections, " "), flag01(disableOthers))
	}
}

// stripRepoFiles adds to sc the calls removing our sections from the
// existing files of the same names (the others kept, disabled when
// disableOthers is set): during the build dnf reads ours from the tmpfs
// secret dir (see buildRepoSecrets).
func stripRepoFiles(sc *vmScript, files []repoFile, disableOthers bool) {
	for _, f := range files {
		sc.call("strip_repo_file", path.Join(repoDir, f.Name), strings.Join(f.Sections, " "), flag01(disableOthers))
	}
}

// buildRepoSecrets adds the build's repo files, credentials and all, to
// sc's secrets, where fatimage_dnf reads them.
func (p *plan) buildRepoSecrets(sc *vmScript, workDir string) {
	for _, f := range renderRepoFiles(p.repos, p.repoUsername, p.repoPassword, false) {
		sc.secret(workDir, path.Join("repos", f.Name), []byte(f.Content))
	}
}

// repoFileNames are the files' names.
func repoFileNames(files []repoFile) []string {
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	return names
}

// snapshotTimestamp returns a repo's snapshot timestamp: the configured
// one, else the last path element of its baseurl.
func snapshotTimestamp(r Repo) string {
	if r.Timestamp != "" {
		return r.Timestamp
	}
	return path.Base(strings.TrimRight(r.BaseURL, "/"))
}
