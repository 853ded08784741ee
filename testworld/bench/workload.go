package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

// Workload is one fat-image job, given to the provisioner as its
// configuration and to the playbook as extra vars: the lab's newer Ark
// snapshots with credentials and the GPG key, dnf update, the built-in
// package sets of Groups with their content (files, units, dashboards,
// keys; see content.go), the three monitoring binaries, cleanup.
type Workload struct {
	Groups   []string
	Repos    []map[string]any
	Username string
	Password string
	GPGKeys  []map[string]string // path, key
	Sets     []PackageSet
	Remove   []string
	Users    []UserSpec
	Binaries []BinarySpec
	Plugins  []string // "<id> <version>"
	Services []string
	// ReleaseBaseURL is the lab's release server as release_base_url.
	ReleaseBaseURL string
	UpdateExclude  []string
	// Packages are installed besides the groups' sets (the provisioner's
	// `packages`; one more set for the playbooks): the realistic workload.
	Packages []string
	// Realistic is the generated repository AddRealistic added.
	Realistic *repos.WorkloadRepo
	// Content is the groups' content (files, units, dashboards, ...).
	Content *Content
	// RcloneStub is what the provisioner's cleanup leaves as /usr/bin/rclone.
	RcloneStub string
}

// PackageSet is one inventory group's packages (one dnf task in the playbook).
type PackageSet struct {
	Name        string   `json:"name"`
	Packages    []string `json:"packages"`
	EnableRepos []string `json:"enable_repos"`
}

// UserSpec is a fixed-id user of the built-in sets.
type UserSpec struct {
	Name  string `json:"name"`
	UID   int    `json:"uid"`
	Group string `json:"group"`
	GID   int    `json:"gid"`
	// PrimaryGroup is the user's primary group ("": useradd's default,
	// which is -N's when a group of its name exists, as the user module
	// decides; the plugin's primary_group = false).
	PrimaryGroup string `json:"primary_group"`
	Home         string `json:"home"`
	Shell        string `json:"shell"`
	System       bool   `json:"system"`
	CreateHome   bool   `json:"create_home"`
}

// BinarySpec is a release tarball with the lab's checksum.
type BinarySpec struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	SHA256  string   `json:"sha256"`
	URL     string   `json:"url"`
	Files   []string `json:"files"`
}

// NewWorkload resolves groups through the provisioner's built-in package
// sets against lab l.
func NewWorkload(l *lab.Lab, groups ...string) (*Workload, error) {
	sets, err := packagesets.Resolve(groups, nil) // the benchmark sets no with_option option
	if err != nil {
		return nil, err
	}
	// the provisioner is given the built-in sets the groups expand to: a
	// node role alone (control) is refused without an inventory
	var names []string
	for _, g := range sets {
		names = append(names, g.Name)
	}
	w := &Workload{Groups: names, Username: l.Env["ARK_USERNAME"], Password: l.Env["ARK_PASSWORD"],
		ReleaseBaseURL: l.Env["LAB_RELEASES_URL"], UpdateExclude: []string{"grafana", "apptainer"}}
	seen := map[string]bool{}
	add := func(kind string, l *[]string, items []string) {
		for _, it := range items {
			if !seen[kind+it] {
				seen[kind+it] = true
				*l = append(*l, it)
			}
		}
	}
	var bins, users []string
	for _, g := range sets {
		if len(g.Packages)+len(g.NoWeakDeps) > 0 {
			set := PackageSet{Name: g.Name, EnableRepos: g.EnableRepos}
			add("p", &set.Packages, g.NoWeakDeps)
			add("p", &set.Packages, g.Packages)
			if len(set.Packages) > 0 {
				w.Sets = append(w.Sets, set)
			}
		}
		add("r", &w.Remove, g.Remove)
		add("b", &bins, g.Binaries)
		add("g", &w.Plugins, g.GrafanaPlugins)
		add("s", &w.Services, g.Services)
		add("u", &users, g.Users)
	}
	for _, name := range users {
		u, _ := packagesets.LookupUser(name)
		w.Users = append(w.Users, UserSpec{Name: u.Name, UID: u.UID, Group: u.Group, GID: u.GID, PrimaryGroup: u.Primary(), Home: u.Home,
			Shell: u.Shell, System: u.System, CreateHome: u.CreateHome})
	}
	sums := l.BinaryChecksums()
	for _, b := range l.Releases.Binaries() {
		if slices.Contains(bins, b.Name) {
			bin, _ := packagesets.LookupBinary(b.Name)
			w.Binaries = append(w.Binaries, BinarySpec{Name: b.Name, Version: b.Version, SHA256: sums[b.Name],
				URL: l.Releases.TarballURL(b), Files: bin.Files})
		}
	}
	for _, r := range l.SnapshotRepos(repos.NewerTimestamp) {
		w.Repos = append(w.Repos, r.(map[string]any))
	}
	if len(w.Repos) == 0 {
		return nil, fmt.Errorf("no newer snapshots in the lab")
	}
	w.GPGKeys = []map[string]string{{"path": "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9", "key": string(l.Repos.GPGKeyFiles["RPM-GPG-KEY-Rocky-9"])}}
	if w.Content, err = GroupContent(sets, w.dashboardsURL()); err != nil {
		return nil, err
	}
	if w.RcloneStub, err = RcloneStub(); err != nil {
		return nil, err
	}
	return w, nil
}

// SkipCleanup are the provisioner's cleanup steps neither side runs: they
// remove the SSH keys the measurement needs afterwards.
var SkipCleanup = []string{"ssh-host-keys", "login-ssh-keys"}

// ProvisionerConfig is the fatimage provisioner's configuration.
func (w *Workload) ProvisionerConfig() map[string]any {
	var bins []any
	for _, b := range w.Binaries {
		bins = append(bins, map[string]any{"name": b.Name, "sha256": b.SHA256})
	}
	var keys []any
	for _, k := range w.GPGKeys {
		keys = append(keys, map[string]any{"path": k["path"], "key": k["key"]})
	}
	var rs []any
	for _, r := range w.Repos {
		rs = append(rs, r)
	}
	return map[string]any{
		"repos":            rs,
		"repo_username":    w.Username,
		"repo_password":    w.Password,
		"gpg_keys":         keys,
		"groups":           w.Groups,
		"binaries":         bins,
		"release_base_url": w.ReleaseBaseURL,
		// the grafana group's dashboards from the lab's release server
		"grafana_dashboards_url": w.dashboardsURL(),
		"packages":               w.Packages,
		"skip_cleanup_steps":     SkipCleanup,
		// the playbook does not move the login user's home
		"move_login_home": false,
	}
}

// dashboardsURL is the lab release server's grafana.com stand-in.
func (w *Workload) dashboardsURL() string { return strings.TrimSuffix(w.ReleaseBaseURL, "/prometheus") }

// AnsibleVars are the playbook's extra vars.
func (w *Workload) AnsibleVars() map[string]any {
	var plugins []map[string]string
	for _, p := range w.Plugins {
		id, ver, _ := strings.Cut(p, " ")
		plugins = append(plugins, map[string]string{"id": id, "version": ver})
	}
	var rs []map[string]any
	var names []string
	for _, r := range w.Repos {
		names = append(names, fmt.Sprint(r["name"]))
		rs = append(rs, map[string]any{"repo_file": r["repo_file"], "repo_name": r["repo_name"], "baseurl": r["baseurl"], "gpgcheck": r["gpgcheck"]})
	}
	sets := w.Sets
	for i := range sets {
		if sets[i].EnableRepos == nil {
			sets[i].EnableRepos = []string{}
		}
	}
	c := w.Content
	if c == nil {
		c = &Content{}
	}
	return map[string]any{
		"ark_repos": rs, "ark_username": w.Username, "ark_password": w.Password,
		"gpg_keys": ImageKeys(names, w.GPGKeys, c.Keys), "package_sets": sets, "remove_packages": w.Remove,
		"users": w.Users, "binaries": w.Binaries, "grafana_plugins": plugins,
		"services": w.Services, "update_exclude": w.UpdateExclude,
		"files": nonNil(c.Files), "line_edits": nonNil(c.LineEdits), "systemd_units": nonNil(c.SystemdUnits),
		"modprobe_blacklist": nonNil(c.ModprobeBlacklist), "tmpfiles": nonNil(c.Tmpfiles), "limits": nonNil(c.Limits),
		"sysctl": nonNil(c.Sysctl), "grafana_dashboards": nonNil(c.Dashboards), "rclone_stub": w.RcloneStub,
	}
}

// nonNil is l, or an empty list (JSON [] rather than null: the
// playbooks loop over every kind).
func nonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// WorkloadSpec is the realistic workload's size: repos.RealWorkload unless
// BENCH_WORKLOAD=small (a tenth of it, for a quick look) or lab (none:
// only the lab's stand-ins).
func WorkloadSpec() (repos.WorkloadSpec, bool) {
	switch os.Getenv("BENCH_WORKLOAD") {
	case "lab":
		return repos.WorkloadSpec{}, false
	case "small":
		return repos.WorkloadSpec{Packages: 100, TotalBytes: 40 << 20, Tops: 4, Depth: 6}, true
	}
	return repos.RealWorkload, true
}

// AddRealistic builds (once; cached and content-hashed beside the lab's
// repositories, signed with the same lab key) the generated workload
// repository, serves it from the lab's Pulp double behind the Ark
// credentials and adds it and its top-level packages to w.
func (w *Workload) AddRealistic(l *lab.Lab, cacheDir string, spec repos.WorkloadSpec, logf func(string, ...any)) error {
	wr, err := repos.BuildWorkload(filepath.Join(cacheDir, "repos"), spec, logf)
	if err != nil {
		return err
	}
	l.Pulp.AddDistribution(pulpfake.Distribution{BasePath: wr.BasePath(), Dir: wr.Dir,
		Guard: &pulpfake.Guard{Users: map[string]string{lab.ArkUser: l.ArkPassword}}})
	w.Repos = append(w.Repos, map[string]any{
		"name": wr.RepoName, "repo_file": wr.RepoFile, "repo_name": wr.RepoName,
		"baseurl": strings.TrimRight(l.Env["ARK_CONTENT_URL"], "/") + "/" + wr.BasePath(),
		"path":    wr.PulpPath, "timestamp": wr.Timestamp, "gpgcheck": true,
	})
	w.Packages = wr.Tops
	w.Sets = append(w.Sets, PackageSet{Name: "workload", Packages: wr.Tops, EnableRepos: []string{}})
	w.Realistic = wr
	return nil
}
