package fatimage

import (
	"fmt"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/mitchellh/mapstructure"

	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// Built-in groups carry content (issue #15): a group's `content` in
// package_sets.yaml is written as a template would write those options,
// decoded here with the same types, checked on its own (errors name the
// group) and then merged with the template's own entries:
//
//   - the same entry from two groups is kept once;
//   - a template entry with the same identity (destination, unit or
//     drop-in name, RPM file name, kernel argument) as a group's replaces
//     the group's,
//     so a site can re-pin or rewrite what a group does;
//   - two groups writing the same identity differently, or a group and
//     the template claiming one path with different kinds, is an error
//     naming both.
//
// Group entries come first, in group order, then the template's.

// groupContent is the part of the configuration a group can carry.
type groupContent struct {
	GitCheckouts       []GitCheckout       `mapstructure:"git_checkouts"`
	Downloads          []Download          `mapstructure:"downloads"`
	RPMURLs            []RPMURL            `mapstructure:"rpm_urls"`
	Containers         []Container         `mapstructure:"containers"`
	PythonEnvs         []PythonEnv         `mapstructure:"python_envs"`
	SystemdUnits       []SystemdUnit       `mapstructure:"systemd_units"`
	Sysctls            []Sysctl            `mapstructure:"sysctl"`
	ModprobeBlacklists []ModprobeBlacklist `mapstructure:"modprobe_blacklist"`
	Tmpfiles           []ConfigFile        `mapstructure:"tmpfiles"`
	Limits             []ConfigFile        `mapstructure:"limits"`
	KernelArgs         []string            `mapstructure:"kernel_args"`
	Files              []File              `mapstructure:"files"`
	GrafanaDashboards  []GrafanaDashboard  `mapstructure:"grafana_dashboards"`
	LineEdits          []LineEdit          `mapstructure:"line_edits"`
	GPGKeys            []GPGKey            `mapstructure:"gpg_keys"`
}

// groupOptions are the boolean options a group's with_option names;
// appliance_dir is true when a site's appliance checkout is given (what
// a group takes from it is left out without one).
func (c *Config) groupOptions() map[string]bool {
	return map[string]bool{"sssd_install_ldap": c.SSSDInstallLDAP, "appliance_dir": c.ApplianceDir != ""}
}

// placeholders are what a group's content strings may refer to.
func (c *Config) placeholders() map[string]string {
	return map[string]string{
		"{{git_base_url}}":         strings.TrimSuffix(c.GitBaseURL, "/"),
		"{{github_releases_url}}":  strings.TrimSuffix(c.GitHubReleasesURL, "/"),
		"{{python_index_url}}":     c.PythonIndexURL,
		"{{netlib_url}}":           strings.TrimSuffix(c.NetlibURL, "/"),
		"{{appliance_dir}}":        strings.TrimSuffix(c.ApplianceDir, "/"),
		"{{rstudio_download_url}}": strings.TrimSuffix(c.RStudioDownloadURL, "/"),
		// only through {{container_registry|<the image's own registry>}}
		"{{container_registry}}": strings.TrimSuffix(c.ContainerRegistry, "/"),
	}
}

// reRegistryPlaceholder is the placeholder of a container image's registry:
// {{container_registry|<the image's own registry>}}.
var reRegistryPlaceholder = regexp.MustCompile(`\{\{container_registry\|([A-Za-z0-9.:-]+)\}\}`)

// render replaces the placeholders in every string of v (a decoded YAML
// value) and turns a file's `embedded: <name>` into its content; used
// collects the placeholders met.
func render(v any, repl map[string]string, used map[string]bool) (any, error) {
	return packagesets.RenderContent(v, func(x string) (string, error) {
		x = reRegistryPlaceholder.ReplaceAllStringFunc(x, func(m string) string {
			if r := repl["{{container_registry}}"]; r != "" {
				return r
			}
			return reRegistryPlaceholder.FindStringSubmatch(m)[1]
		})
		for k, r := range repl {
			if strings.Contains(x, k) {
				used[k] = true
				x = strings.ReplaceAll(x, k, r)
			}
		}
		return x, nil
	})
}

// decodeGroupContent is one group's content as configuration.
func (c *Config) decodeGroupContent(g packagesets.Group) (*groupContent, []error) {
	var gc groupContent
	if len(g.Content) == 0 {
		return &gc, nil
	}
	used := map[string]bool{}
	raw, err := render(map[string]any(g.Content), c.placeholders(), used)
	if err != nil {
		return nil, []error{fmt.Errorf("group %q: %v", g.Name, err)}
	}
	if used["{{appliance_dir}}"] && c.ApplianceDir == "" {
		return nil, []error{fmt.Errorf("group %q: appliance_dir is required: the group places playbooks and roles from the site's appliance checkout", g.Name)}
	}
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{ErrorUnused: true, WeaklyTypedInput: true, Result: &gc})
	if err == nil {
		err = dec.Decode(raw)
	}
	if err != nil {
		return nil, []error{fmt.Errorf("group %q: content: %v", g.Name, err)}
	}
	// checked as a template's would be, on its own
	tmp := &Config{ContentSource: c.ContentSource, BinarySource: c.BinarySource, users: c.users}
	defaultKeyPaths(gc.GPGKeys)
	gc.apply(tmp)
	var errs []error
	for _, e := range append(append(tmp.validateContent(), tmp.validateFiles()...), tmp.validateGPGKeys()...) {
		errs = append(errs, fmt.Errorf("group %q: %v", g.Name, e))
	}
	return &gc, errs
}

// apply sets c's content options to gc's.
func (gc *groupContent) apply(c *Config) {
	c.GitCheckouts, c.Downloads, c.RPMURLs, c.PythonEnvs = gc.GitCheckouts, gc.Downloads, gc.RPMURLs, gc.PythonEnvs
	c.SystemdUnits, c.Sysctls, c.ModprobeBlacklists = gc.SystemdUnits, gc.Sysctls, gc.ModprobeBlacklists
	c.Containers = gc.Containers
	c.Tmpfiles, c.Limits, c.KernelArgs, c.Files = gc.Tmpfiles, gc.Limits, gc.KernelArgs, gc.Files
	c.GrafanaDashboards = gc.GrafanaDashboards
	c.LineEdits = gc.LineEdits
	c.GPGKeys = gc.GPGKeys
}

// owned is an entry and the group it comes from ("" for the template).
type owned[T any] struct {
	group string
	v     T
}

// mergeEntries applies the merge rule to one kind: the groups' entries
// (deduplicated, replaced by the template's of the same identity), then
// the template's.
func mergeEntries[T any](field string, groups []owned[T], template []T, id func(T) string, errs *[]error) []T {
	byID := map[string]owned[T]{}
	fromTemplate := map[string]bool{}
	for _, t := range template {
		fromTemplate[id(t)] = true
	}
	var out []T
	for _, g := range groups {
		k := id(g.v)
		if prev, ok := byID[k]; ok {
			if !reflect.DeepEqual(prev.v, g.v) && !fromTemplate[k] {
				*errs = append(*errs, fmt.Errorf("groups %q and %q both set %s %s, differently; set it in the template to choose", prev.group, g.group, field, k))
			}
			continue
		}
		byID[k] = g
		if !fromTemplate[k] {
			out = append(out, g.v)
		}
	}
	return append(out, template...)
}

// expandGroupContent merges the content of the groups in c.sets into
// c's options and checks the vendor repositories the groups need.
func (c *Config) expandGroupContent() []error {
	if c.sets == nil {
		return nil
	}
	var errs []error
	var (
		git   []owned[GitCheckout]
		dl    []owned[Download]
		rpms  []owned[RPMURL]
		cts   []owned[Container]
		py    []owned[PythonEnv]
		units []owned[SystemdUnit]
		sysc  []owned[Sysctl]
		mods  []owned[ModprobeBlacklist]
		tmpf  []owned[ConfigFile]
		lim   []owned[ConfigFile]
		kargs []owned[string]
		files []owned[File]
		dash  []owned[GrafanaDashboard]
		lines []owned[LineEdit]
		keys  []owned[GPGKey]
	)
	for _, g := range c.sets.groups {
		errs = append(errs, c.checkNeededRepos(g)...)
		gc, gerrs := c.decodeGroupContent(g)
		errs = append(errs, gerrs...)
		if gc == nil {
			continue
		}
		git = appendOwned(git, g.Name, gc.GitCheckouts)
		dl = appendOwned(dl, g.Name, gc.Downloads)
		rpms = appendOwned(rpms, g.Name, gc.RPMURLs)
		cts = appendOwned(cts, g.Name, gc.Containers)
		py = appendOwned(py, g.Name, gc.PythonEnvs)
		units = appendOwned(units, g.Name, gc.SystemdUnits)
		sysc = appendOwned(sysc, g.Name, gc.Sysctls)
		mods = appendOwned(mods, g.Name, gc.ModprobeBlacklists)
		tmpf = appendOwned(tmpf, g.Name, gc.Tmpfiles)
		lim = appendOwned(lim, g.Name, gc.Limits)
		kargs = appendOwned(kargs, g.Name, gc.KernelArgs)
		files = appendOwned(files, g.Name, gc.Files)
		dash = appendOwned(dash, g.Name, gc.GrafanaDashboards)
		lines = appendOwned(lines, g.Name, gc.LineEdits)
		keys = appendOwned(keys, g.Name, gc.GPGKeys)
	}
	errs = append(errs, c.checkPathKinds(git, dl, py, files)...)
	c.GitCheckouts = mergeEntries("git_checkouts destination", git, c.GitCheckouts, func(g GitCheckout) string { return g.Destination }, &errs)
	c.Downloads = mergeEntries("downloads destination", dl, c.Downloads, Download.identity, &errs)
	// an RPM's identity is its file name: a template entry for the same
	// file (e.g. with its sha256 pinned, or from a mirror) replaces the group's
	c.RPMURLs = mergeEntries("rpm_urls file", rpms, c.RPMURLs, func(r RPMURL) string { return path.Base(r.URL) }, &errs)
	c.Containers = mergeEntries("containers image", cts, c.Containers, func(ct Container) string { return ct.user() + " " + ct.Image }, &errs)
	c.PythonEnvs = mergeEntries("python_envs", py, c.PythonEnvs, func(e PythonEnv) string { return e.label() }, &errs)
	c.SystemdUnits = mergeEntries("systemd_units", units, c.SystemdUnits, func(u SystemdUnit) string { return u.Name }, &errs)
	c.Sysctls = mergeEntries("sysctl", sysc, c.Sysctls, func(s Sysctl) string { return s.Name }, &errs)
	c.ModprobeBlacklists = mergeEntries("modprobe_blacklist", mods, c.ModprobeBlacklists, func(m ModprobeBlacklist) string { return m.Name }, &errs)
	c.Tmpfiles = mergeEntries("tmpfiles", tmpf, c.Tmpfiles, func(f ConfigFile) string { return f.Name }, &errs)
	c.Limits = mergeEntries("limits", lim, c.Limits, func(f ConfigFile) string { return f.Name }, &errs)
	c.KernelArgs = mergeEntries("kernel_args", kargs, c.KernelArgs, func(a string) string { k, _, _ := strings.Cut(a, "="); return k }, &errs)
	c.Files = mergeEntries("files destination", files, c.Files, func(f File) string { return f.Destination }, &errs)
	c.GrafanaDashboards = mergeEntries("grafana_dashboards file", dash, c.GrafanaDashboards, func(d GrafanaDashboard) string { return d.name() }, &errs)
	c.LineEdits = mergeEntries("line_edits", lines, c.LineEdits, LineEdit.id, &errs)
	c.GPGKeys = mergeEntries("gpg_keys path", keys, c.GPGKeys, keyID, &errs)
	for _, u := range c.SystemdUnits {
		if u.state() == "enabled" && slices.Contains(c.disabledServices(), strings.TrimSuffix(u.Name, ".service")) {
			errs = append(errs, fmt.Errorf("systemd_units: %s is left enabled by a group but disable_services (or a group's services) disables it", u.Name))
		}
	}
	return errs
}

func appendOwned[T any](l []owned[T], group string, vs []T) []owned[T] {
	for _, v := range vs {
		l = append(l, owned[T]{group, v})
	}
	return l
}

// checkPathKinds refuses one path claimed by two kinds, one of them a
// group's: a group's checkout where the template downloads a file.
func (c *Config) checkPathKinds(git []owned[GitCheckout], dl []owned[Download], py []owned[PythonEnv], files []owned[File]) []error {
	type claim struct{ who, kind string }
	seen := map[string]claim{}
	var errs []error
	put := func(kind, group, p string) {
		if p == "" {
			return
		}
		who := "the template"
		if group != "" {
			who = fmt.Sprintf("group %q", group)
		}
		if o, ok := seen[p]; ok && o.kind != kind && (group != "" || o.who != "the template") {
			errs = append(errs, fmt.Errorf("%s's %s and %s's %s both write %s", o.who, o.kind, who, kind, p))
			return
		}
		if _, ok := seen[p]; !ok {
			seen[p] = claim{who, kind}
		}
	}
	for _, g := range git {
		put("git_checkouts", g.group, g.v.Destination)
	}
	for _, g := range c.GitCheckouts {
		put("git_checkouts", "", g.Destination)
	}
	for _, d := range dl {
		put("downloads", d.group, d.v.Destination)
	}
	for _, d := range c.Downloads {
		put("downloads", "", d.Destination)
	}
	for _, e := range py {
		if !e.v.System {
			put("python_envs", e.group, e.v.Path)
		}
	}
	for _, e := range c.PythonEnvs {
		if !e.System {
			put("python_envs", "", e.Path)
		}
	}
	for _, f := range files {
		put("files", f.group, path.Clean(f.v.Destination))
	}
	for _, f := range c.Files {
		put("files", "", path.Clean(f.Destination))
	}
	return errs
}

// checkNeededRepos names each vendor repository a group installs from
// that no `repos` entry (or enable_repos) provides, and refuses a group
// the plugin does not do.
func (c *Config) checkNeededRepos(g packagesets.Group) []error {
	var errs []error
	if g.Unsupported != "" {
		errs = append(errs, fmt.Errorf("group %q is not supported: %s", g.Name, g.Unsupported))
	}
	for _, r := range g.NeedsRepos {
		if !slices.Contains(c.repoIDs(), r.Name) {
			errs = append(errs, fmt.Errorf("group %q needs the vendor repository %q (%s), which is not configured: add a repos entry with repo_name = %q", g.Name, r.Name, r.What, r.Name))
		}
	}
	return errs
}
