package fatimage

import (
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/mitchellh/mapstructure"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/downloads"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/files"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/git"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/keys"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/python"
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

// templateContent is what the template itself sets.
func (c *Config) templateContent() *ContentOptions { return &c.ContentOptions }

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

// reRolePlaceholder is a Galaxy role's directory as the site's Ansible
// finds it: {{appliance_role:<name>}}; without a site environment, the
// checkout's ansible/roles/<name>, where `ansible-galaxy install` puts it.
var reRolePlaceholder = regexp.MustCompile(`\{\{appliance_role:([A-Za-z0-9_.-]+)\}\}`)

// rolePlaceholders replaces the role placeholders of x.
func (c *Config) rolePlaceholders(x string, used map[string]bool) (string, error) {
	var err error
	site := c.applianceSite()
	x = reRolePlaceholder.ReplaceAllStringFunc(x, func(m string) string {
		name := reRolePlaceholder.FindStringSubmatch(m)[1]
		used["{{appliance_dir}}"] = true
		if site == nil {
			return filepath.Join(strings.TrimSuffix(c.ApplianceDir, "/"), "ansible", "roles", name)
		}
		dir, ferr := site.FindRole(name)
		if ferr == nil && dir == "" {
			ferr = fmt.Errorf("role %s: not in the environment's roles_path nor appliance_roles_path", name)
		}
		if ferr != nil && err == nil {
			err = ferr
		}
		return dir
	})
	return x, err
}

// render replaces the placeholders in every string of v (a decoded YAML
// value) and turns a file's `embedded: <name>` into its content; used
// collects the placeholders met.
func render(v any, repl map[string]string, used map[string]bool, roles func(string, map[string]bool) (string, error)) (any, error) {
	return packagesets.RenderContent(v, func(x string) (string, error) {
		x, err := roles(x, used)
		if err != nil {
			return "", err
		}
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

// decodeGroupContent is one group's content, checked on its own as a
// template's would be.
func (c *Config) decodeGroupContent(g packagesets.Group) (*ContentOptions, []error) {
	var gc ContentOptions
	if len(g.Content) == 0 {
		return &gc, nil
	}
	used := map[string]bool{}
	raw, err := render(map[string]any(g.Content), c.placeholders(), used, c.rolePlaceholders)
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
	keys.DefaultPaths(gc.GPGKeys)
	// an item the template replaces is checked as the template's
	checked := gc
	ids, replaced := map[string][]string{}, map[string][]int{}
	for _, k := range contentKinds() {
		ids[k.option()], replaced[k.option()] = k.adopt(&checked, c.templateContent())
	}
	var errs []error
	var unpinned []string // the checks' error prefixes the errors below say better
	for _, u := range g.Unpinned() {
		if !slices.Contains(replaced[u.Option], u.Index) {
			field := path.Base(u.Source.Into)
			errs = append(errs, fmt.Errorf("group %q: %s: the plugin pins no %s for the appliance's value (only for %s): give %s an entry with %s, its url and %s",
				g.Name, u.Source.Label(), field, strings.Join(slices.Sorted(maps.Keys(u.Source.Pins)), ", "), u.Option, ids[u.Option][u.Index], field))
			unpinned = append(unpinned, fmt.Sprintf("%s[%d]: %s ", u.Option, u.Index, field))
		}
	}
	for _, e := range checked.check(c.contentSource()) {
		if !slices.ContainsFunc(unpinned, func(p string) bool { return strings.HasPrefix(e.Error(), p) }) {
			errs = append(errs, fmt.Errorf("group %q: %v", g.Name, e))
		}
	}
	return &gc, errs
}

// owned is an item and where it comes from.
type owned[T any] struct {
	origin origin
	v      T
}

// mergeEntries applies the merge rule to one kind: the groups' entries
// (deduplicated, replaced by the template's of the same identity), then
// the template's; it returns them with their origins.
func mergeEntries[T any](field string, groups []owned[T], template []T, id func(T) string, errs *[]error) ([]T, []origin) {
	byID := map[string]owned[T]{}
	fromTemplate := map[string]bool{}
	for _, t := range template {
		fromTemplate[id(t)] = true
	}
	var out []T
	var origins []origin
	for _, g := range groups {
		k := id(g.v)
		if prev, ok := byID[k]; ok {
			if !reflect.DeepEqual(prev.v, g.v) && !fromTemplate[k] {
				*errs = append(*errs, fmt.Errorf("groups %q and %q both set %s %s, differently; set it in the template to choose", prev.origin.group, g.origin.group, field, k))
			}
			continue
		}
		byID[k] = g
		if !fromTemplate[k] {
			out = append(out, g.v)
			origins = append(origins, g.origin)
		}
	}
	for range template {
		origins = append(origins, origin{})
	}
	return append(out, template...), origins
}

// groupItems is one group's content.
type groupItems struct {
	origin origin
	items  *ContentOptions
}

// ofKind is one kind's items of every group, with their origins.
func ofKind[T any](groups []groupItems, get func(*ContentOptions) *[]T) []owned[T] {
	var out []owned[T]
	for _, g := range groups {
		for i, v := range *get(g.items) {
			o := g.origin
			o.index = i
			out = append(out, owned[T]{o, v})
		}
	}
	return out
}

// mergeKind merges one kind of the groups' content with the template's
// into the plan, recording the origins under the option's name.
func mergeKind[T any](p *plan, groups []groupItems, option, field string, get func(*ContentOptions) *[]T, id func(T) string, errs *[]error) {
	items := ofKind(groups, get)
	for i := range items {
		items[i].origin.variable = p.contentVariable(items[i].origin.group, option, items[i].origin.index)
	}
	merged, origins := mergeEntries(field, items, *get(p.cfg.templateContent()), id, errs)
	*get(&p.ContentOptions) = merged
	p.origins[option] = origins
}

// contentVariable is the appliance variable a group's items of a content
// option came from, when the site's appliance gave them.
func (p *plan) contentVariable(group, option string, index int) string {
	for _, a := range p.sets.applied {
		if a.Group == group && a.Var != "" && (a.Into == "content/"+option || strings.HasPrefix(a.Into, fmt.Sprintf("content/%s/%d/", option, index))) {
			return a.Var
		}
	}
	return ""
}

// fieldVariable is the appliance variable field of the group's item at
// o came from, when the site's appliance gave it.
func (p *plan) fieldVariable(o origin, option, field string) string {
	into := fmt.Sprintf("content/%s/%d/%s", option, o.index, field)
	for _, a := range p.sets.applied {
		if a.Group == o.group && a.Var != "" && a.Into == into {
			return a.Var
		}
	}
	return ""
}

// mergeGroupContent makes the plan's content: the content of the groups
// in p.sets merged with the template's; it checks the vendor
// repositories the groups need too.
func (p *plan) mergeGroupContent() []error {
	c := p.cfg
	var errs []error
	var groups []groupItems
	for _, g := range p.sets.groups {
		errs = append(errs, p.checkNeededRepos(g)...)
		gc, gerrs := c.decodeGroupContent(g)
		errs = append(errs, gerrs...)
		if gc != nil {
			groups = append(groups, groupItems{origin{group: g.Name}, gc})
		}
	}
	errs = append(errs, checkPathKinds(groups, c.templateContent())...)
	for _, k := range contentKinds() {
		k.merge(p, groups, &errs)
	}
	errs = append(errs, p.groupContainerUsers()...)
	for _, u := range p.SystemdUnits {
		if u.UnitState() == "enabled" && slices.Contains(p.disabledServices(), strings.TrimSuffix(u.Name, ".service")) {
			errs = append(errs, fmt.Errorf("systemd_units: %s is left enabled by a group but disable_services (or a group's services) disables it", u.Name))
		}
	}
	return errs
}

// checkPathKinds refuses one path claimed by two kinds, one of them a
// group's: a group's checkout where the template downloads a file.
func checkPathKinds(groups []groupItems, template *ContentOptions) []error {
	type claim struct {
		who  origin
		kind string
	}
	seen := map[string]claim{}
	var errs []error
	put := func(kind string, o origin, p string) {
		if p == "" {
			return
		}
		if prev, ok := seen[p]; ok && prev.kind != kind && (o.group != "" || prev.who.group != "") {
			errs = append(errs, fmt.Errorf("%s's %s and %s's %s both write %s", prev.who, prev.kind, o, kind, p))
			return
		}
		if _, ok := seen[p]; !ok {
			seen[p] = claim{o, kind}
		}
	}
	all := append(slices.Clone(groups), groupItems{origin{}, template})
	for _, g := range ofKind(all, func(ci *ContentOptions) *[]git.GitCheckout { return &ci.GitCheckouts }) {
		put("git_checkouts", g.origin, g.v.Destination)
	}
	for _, d := range ofKind(all, func(ci *ContentOptions) *[]downloads.Download { return &ci.Downloads }) {
		put("downloads", d.origin, d.v.Destination)
	}
	for _, e := range ofKind(all, func(ci *ContentOptions) *[]python.PythonEnv { return &ci.PythonEnvs }) {
		if !e.v.System {
			put("python_envs", e.origin, e.v.Path)
		}
	}
	for _, f := range ofKind(all, func(ci *ContentOptions) *[]files.File { return &ci.Files }) {
		put("files", f.origin, path.Clean(f.v.Destination))
	}
	return errs
}

// checkNeededRepos names each vendor repository a group installs from
// that no `repos` entry (or enable_repos) provides, and refuses a group
// the plugin does not do.
func (p *plan) checkNeededRepos(g packagesets.Group) []error {
	var errs []error
	if g.Unsupported != "" {
		errs = append(errs, fmt.Errorf("group %q is not supported: %s", g.Name, g.Unsupported))
	}
	for _, r := range g.NeedsRepos {
		if r.Var != "" && p.site != nil {
			continue // the site's appliance gives it (appliance_vendor_repos.go)
		}
		if !slices.Contains(p.repoIDs(), r.Name) {
			errs = append(errs, fmt.Errorf("group %q needs the vendor repository %q (%s), which is not configured: add a repos entry with repo_name = %q", g.Name, r.Name, r.What, r.Name))
		}
	}
	return errs
}
