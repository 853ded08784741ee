//go:generate go run ./groupsdoc ../../docs/provisioners/fatimage-groups.md ../../docs/appliance-contract.md

// Package packagesets is the built-in table of what each inventory group
// of the Slurm appliance puts into an image (package_sets.yaml): packages,
// module streams, repositories, release tarballs, fixed-id users and
// services. The fatimage provisioner builds from it; the benchmarks give
// Ansible the same workload from it.
package packagesets

import (
	"embed"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

//go:embed package_sets.yaml
var packageSetsYAML []byte

// files are the files groups place from the plugin itself (`embedded:`
// in a group's content), by path below files/.
//
//go:embed files
var files embed.FS

// Set is what one built-in inventory group puts into an image.
type Set struct {
	Packages       []string `yaml:"packages"`
	Remove         []string `yaml:"remove"`
	Modules        []string `yaml:"modules"`
	EnableRepos    []string `yaml:"enable_repos"`
	Binaries       []string `yaml:"binaries"`
	GrafanaPlugins []string `yaml:"grafana_plugins"`
	Users          []string `yaml:"users"`
	// UserDefs are the built-in users of Users whose name, group or home
	// a source set from the site's appliance (into users/<name>/<field>),
	// by built-in name; the others are the users table's.
	UserDefs map[string]User `yaml:"-"`
	Services []string        `yaml:"services"`
	// Content is provisioner configuration the group adds, written as a
	// template would write it (git_checkouts, downloads, python_envs,
	// systemd_units, sysctl, modprobe_blacklist, tmpfiles, limits,
	// kernel_args, files); the provisioner decodes it with its own
	// types, so a group can say nothing a template could not.
	Content map[string]any `yaml:"content"`
	// NeedsRepos are vendor repositories (repo_name sections) the
	// group installs from and the plugin cannot supply.
	NeedsRepos []NeededRepo `yaml:"needs_repos"`
	// Unsupported says why the plugin does not do the group's build-time
	// work (ofed): asking for the group is an error with this reason.
	Unsupported string `yaml:"unsupported"`
	// WithOption adds a set when a boolean provisioner option of that
	// name is true (sssd_install_ldap adds sssd-ldap).
	WithOption map[string]Set `yaml:"with_option"`
	// WithGroup adds a set when the named built-in group is built too
	// (grafana's Open OnDemand dashboard joins with openondemand).
	WithGroup map[string]Set `yaml:"with_group"`

	// Latest are packages the transaction takes to the snapshot's newest
	// even without the update, as a role's `state: latest` does; every
	// other package an installed one already provides keeps its version
	// (`state: present`). None at f49fc24: a site's `latest` for a
	// version variable puts a name here (ApplianceVar.Latest).
	Latest []string `yaml:"latest"`
	// NoWeakDeps are packages installed before the others, in the same
	// dnf process, with weak dependencies off (the appliance's openhpc
	// role installs its Slurm set so; everything else at dnf's default).
	NoWeakDeps []string `yaml:"no_weak_deps"`
	// RunAfterPackages are the plugin's own scripts (files/<name>, run by
	// sh as root) run once after the package transaction, in group order:
	// a package's setup command the appliance runs (cvmfs_config setup).
	RunAfterPackages []string `yaml:"run_after_packages"`
	// NoGPGCheckRepos are repositories (repo_name) whose packages the
	// transaction installs without GPG check, as the appliance installs
	// cvmfs-config-eessi (its RPM is unsigned).
	NoGPGCheckRepos []string `yaml:"no_gpgcheck_repos"`
	// Appliance names the appliance variables parts of the set come
	// from (appliance.go); the set's own values are the fallback.
	Appliance []ApplianceVar `yaml:"appliance"`
	// SiteRole is the appliance role that does the group's work with a
	// site's appliance, run through the site's Ansible (the group is
	// then not built natively); "" none.
	SiteRole string `yaml:"site_role"`
	// PerMajor are the parts of the set that differ on another Rocky
	// major than the data's, RL9 (major.go).
	PerMajor []MajorValue `yaml:"per_major"`
}

// NeededRepo is a repository a group needs configured.
type NeededRepo struct {
	Name string `yaml:"name"` // repo_name of the section
	What string `yaml:"what"` // what it is and where the appliance gets it
	// Var is the appliance variable (in Role's scope) the repository
	// comes from with a site's appliance, as the group's role adds it
	// (no `repos` entry needed then); "" when the site must give it.
	Var  string `yaml:"var"`
	Role string `yaml:"role"`
	// From says what Var's value is: "baseurl" (the role writes a section
	// Name with it) or "repo_file" (the URL of a .repo file the role
	// downloads whole).
	From string `yaml:"from"`
	// RepoFile is the file in /etc/yum.repos.d the role writes, without
	// .repo; {os_major} is the build VM's major version.
	RepoFile string `yaml:"repo_file"`
	// GPGCheck is the section's gpgcheck with From "baseurl".
	GPGCheck bool `yaml:"gpgcheck"`
}

// Group is a built-in group and its set.
type Group struct {
	Name string
	Set
}

// User is a built-in user with fixed ids.
type User struct {
	Name  string `yaml:"-"`
	UID   int    `yaml:"uid"`
	Group string `yaml:"group"`
	GID   int    `yaml:"gid"`
	// PrimaryGroup false: Group is made on its own (provisioner's
	// User.PrimaryGroup).
	PrimaryGroup *bool  `yaml:"primary_group"`
	Home         string `yaml:"home"`
	Shell        string `yaml:"shell"`
	System       bool   `yaml:"system"`
	CreateHome   bool   `yaml:"create_home"`
}

// Binary is a built-in release tarball.
type Binary struct {
	Name    string   `yaml:"-"`
	Version string   `yaml:"version"`
	SHA256  string   `yaml:"sha256"`
	Files   []string `yaml:"files"`
	// VersionVar is the appliance variable pinning the version; the
	// sha256 is the built-in version's only.
	VersionVar string `yaml:"version_var"`
	// ChecksumVar is the appliance variable of the pinned version's
	// sha256, which the appliance's group_vars set next to VersionVar.
	ChecksumVar string `yaml:"checksum_var"`
}

type table struct {
	Expands  map[string][]string `yaml:"expands"`
	Groups   map[string]Set      `yaml:"groups"`
	Users    map[string]User     `yaml:"users"`
	Binaries map[string]Binary   `yaml:"binaries"`
	// LocalUsers: the users the appliance's bootstrap.yml creates.
	LocalUsers LocalUsers `yaml:"local_users"`
	// PodmanUsers: the users the appliance's podman role makes.
	PodmanUsers LocalUsers `yaml:"podman_users"`
	// ExtraRepos: a site's own repositories, as the dnf_repos role adds them.
	ExtraRepos ExtraRepos `yaml:"extra_repos"`
}

// builtin is parsed on first use, not at init: every plugin start (the
// builder's and the data source's too) would otherwise pay for it.
var builtin = sync.OnceValue(func() *table { return mustLoad(packageSetsYAML) })

func mustLoad(b []byte) *table {
	var t table
	if err := yaml.Unmarshal(b, &t); err != nil {
		panic("package_sets.yaml: " + err.Error())
	}
	for name, g := range t.Groups {
		for _, f := range embeddedNames(g.Content) {
			if _, err := files.ReadFile("files/" + f); err != nil {
				panic("package_sets.yaml: group " + name + ": " + err.Error())
			}
		}
		for _, f := range g.RunAfterPackages {
			if _, err := files.ReadFile("files/" + f); err != nil {
				panic("package_sets.yaml: group " + name + ": run_after_packages: " + err.Error())
			}
		}
		for _, u := range g.Users {
			if _, ok := t.Users[u]; !ok {
				panic("package_sets.yaml: unknown user " + u)
			}
		}
		for _, b := range g.Binaries {
			if _, ok := t.Binaries[b]; !ok {
				panic("package_sets.yaml: unknown binary " + b)
			}
		}
		for _, r := range g.NeedsRepos {
			if r.Var != "" && (r.RepoFile == "" || (r.From != "baseurl" && r.From != "repo_file")) {
				panic("package_sets.yaml: group " + name + ": needs_repos " + r.Name + ": a var needs repo_file and from baseurl or repo_file")
			}
		}
		if g.SiteRole != "" && len(g.Appliance) > 0 {
			panic("package_sets.yaml: group " + name + ": a site_role group takes no appliance values")
		}
		if err := (Group{name, g}).checkSources(t.Users); err != nil {
			panic("package_sets.yaml: group " + name + ": " + err.Error())
		}
		if err := (Group{name, g}).checkPerMajor(); err != nil {
			panic("package_sets.yaml: " + err.Error())
		}
		for other := range g.WithGroup {
			if _, ok := t.Groups[other]; !ok {
				panic("package_sets.yaml: group " + name + ": with_group names unknown group " + other)
			}
		}
		for _, s := range g.Appliance {
			for _, other := range s.FallbackGroups {
				if _, ok := t.Groups[other]; !ok {
					panic("package_sets.yaml: group " + name + ": fallback_groups names unknown group " + other)
				}
			}
		}
	}
	return &t
}

// Known lists every group name, sorted.
func Known() []string {
	var names []string
	for n := range builtin().Groups {
		names = append(names, n)
	}
	for n := range builtin().Expands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Source is package_sets.yaml as shipped, comments included (the
// groups' reference page is generated from it).
func Source() []byte { return packageSetsYAML }

// Primary is the user's primary group as useradd -g gets it: "" for
// useradd's default.
func (u User) Primary() string {
	if u.PrimaryGroup != nil && !*u.PrimaryGroup {
		return ""
	}
	return u.Group
}

// UserNames are the names of the set's users as the image has them
// (a source may have renamed one: UserDefs).
func (s Set) UserNames() []string {
	out := slices.Clone(s.Users)
	for i, n := range out {
		if u, ok := s.UserDefs[n]; ok {
			out[i] = u.Name
		}
	}
	return out
}

// LookupUser is the built-in user of that name.
func LookupUser(name string) (User, bool) {
	u, ok := builtin().Users[name]
	u.Name = name
	return u, ok
}

// LookupBinary is the built-in release tarball of that name.
func LookupBinary(name string) (Binary, bool) {
	b, ok := builtin().Binaries[name]
	b.Name = name
	return b, ok
}

// Expand expands names (groups such as control stand for others) into
// the built-in groups they mean, in order, each once.
func Expand(names ...string) ([]Group, error) {
	var out []Group
	seen := map[string]bool{}
	var visit func(g string, depth int) error
	visit = func(g string, depth int) error {
		if depth > 8 {
			return fmt.Errorf("groups: %q expands too deeply", g)
		}
		if sub, ok := builtin().Expands[g]; ok {
			for _, x := range sub {
				if err := visit(x, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		set, ok := builtin().Groups[g]
		if !ok {
			return fmt.Errorf("groups: unknown group %q (known groups: %s)", g, strings.Join(Known(), ", "))
		}
		if !seen[g] {
			seen[g] = true
			out = append(out, Group{g, set})
		}
		return nil
	}
	for _, g := range names {
		if err := visit(g, 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Merged is the union of groups' sets, each list deduplicated in
// first-seen order.
func Merged(groups []Group) Set {
	var r Set
	seen := map[string]bool{}
	add := func(kind string, l *[]string, items []string) {
		for _, it := range items {
			if k := kind + "\x00" + it; !seen[k] {
				seen[k] = true
				*l = append(*l, it)
			}
		}
	}
	for _, g := range groups {
		add("p", &r.Packages, g.Packages)
		add("w", &r.NoWeakDeps, g.NoWeakDeps)
		add("l", &r.Latest, g.Latest)
		add("a", &r.RunAfterPackages, g.RunAfterPackages)
		add("n", &r.NoGPGCheckRepos, g.NoGPGCheckRepos)
		add("r", &r.Remove, g.Remove)
		add("m", &r.Modules, g.Modules)
		add("e", &r.EnableRepos, g.EnableRepos)
		add("b", &r.Binaries, g.Binaries)
		add("g", &r.GrafanaPlugins, g.GrafanaPlugins)
		add("u", &r.Users, g.Users)
		for name, u := range g.UserDefs {
			if r.UserDefs == nil {
				r.UserDefs = map[string]User{}
			}
			r.UserDefs[name] = u
		}
		add("s", &r.Services, g.Services)
	}
	return r
}

// IsExpansion reports whether name stands for other groups (fatimage,
// control, ...) rather than having a set of its own.
func IsExpansion(name string) bool {
	_, ok := builtin().Expands[name]
	return ok
}

// Embedded is a file a group places from the plugin (`embedded: <name>`).
func Embedded(name string) ([]byte, error) {
	return files.ReadFile("files/" + name)
}

// embeddedNames are the `embedded:` names of a content block's files.
func embeddedNames(content map[string]any) []string {
	var out []string
	list, _ := content["files"].([]any)
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			if n, ok := m["embedded"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

// Resolve expands names like Expand and adds each group's with_option
// sets whose option is true and its with_group sets whose group is among
// them, right after the group (under its name): the groups a build with
// these options does, for their sets and content.
func Resolve(names []string, options map[string]bool) ([]Group, error) {
	groups, err := Expand(names...)
	if err != nil {
		return nil, err
	}
	present := map[string]bool{}
	for _, g := range groups {
		present[g.Name] = true
	}
	var all []Group
	for _, g := range groups {
		all = append(all, g)
		for _, opt := range slices.Sorted(maps.Keys(g.WithOption)) {
			if options[opt] {
				all = append(all, Group{Name: g.Name, Set: g.WithOption[opt]})
			}
		}
		for _, other := range slices.Sorted(maps.Keys(g.WithGroup)) {
			if present[other] {
				all = append(all, Group{Name: g.Name, Set: g.WithGroup[other]})
			}
		}
	}
	return all, nil
}

// RenderContent is a copy of a group's content value v (decoded YAML)
// with every string passed through str and each file's `embedded: <name>`
// turned into its `content`, the plugin's file.
func RenderContent(v any, str func(string) (string, error)) (any, error) {
	switch x := v.(type) {
	case string:
		return str(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := RenderContent(e, str)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k == "embedded" {
				data, err := Embedded(fmt.Sprint(e))
				if err != nil {
					return nil, err
				}
				out["content"] = string(data)
				continue
			}
			r, err := RenderContent(e, str)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	}
	return v, nil
}
