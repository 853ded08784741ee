package packagesets

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ApplianceVar names the appliance variable a part of a group's set comes from
// (issue #25): with a site's appliance, its value as the site's Ansible
// resolves it on the build VM replaces the items transcribed from
// appliance commit f49fc24, which stay the fallback without one.
type ApplianceVar struct {
	// Into is the list the values go into: "packages", "no_weak_deps",
	// "modules", "grafana_plugins", "remove", a path into the group's content
	// ("content/modprobe_blacklist/0/modules"), or a field of a user of
	// the group ("users/node-exp/name": name, group or home; the user
	// keeps its fixed ids).
	Into string `yaml:"into"`
	// Var is the appliance variable; empty with When alone (then Items
	// are the values when the condition holds).
	Var string `yaml:"var"`
	// Key is a dotted path into the variable's value (a mapping), when
	// the value is part of it (rstudio.version).
	Key string `yaml:"key"`
	// Role is the role whose defaults are in scope ("" none): the role
	// that reads the variable in the appliance's build.
	Role string `yaml:"role"`
	// VarsFiles are the files of Role's vars/ directory that a task of
	// the role includes (include_vars, the first found, each templated
	// with the VM's facts) before the task reading Var: osc.ood's per
	// distribution and major. Their variables rank above the site's
	// group_vars, as for the role's own tasks.
	VarsFiles []string `yaml:"vars_files"`
	// When is the condition the appliance puts on the items (a task's
	// `when`), evaluated in Role's scope: no items when it does not hold.
	When string `yaml:"when"`
	// Items are the items of Into the source gave at f49fc24 (empty: the
	// whole list, or with When none). With the appliance they are
	// replaced by its values, at the place of the first (at the end when
	// none is there).
	Items []string `yaml:"items"`
	// Format makes an item of each value: "{}" is the value
	// (grafana_version 10.4.18 with "grafana-{}" is grafana-10.4.18).
	Format string `yaml:"format"`
	// Latest is the package the value `latest` stands for, which the
	// role then installs with `state: latest` (cloudalchemy.grafana's
	// grafana, osc.ood's ondemand): the item is that name, unformatted,
	// and it joins the group's Latest.
	Latest string `yaml:"latest"`
	// Within is the text of the single value at Into (a unit's content)
	// that the one value, formatted, replaces wherever it occurs: the
	// built-in tag in the unit running an image (opensearch:2.9.0).
	Within string `yaml:"within"`
	// Insert: the value goes in before Within's text, which stays (flags
	// of which the built-in value has none, as node_exporter's disabled
	// collectors).
	Insert bool `yaml:"insert"`
	// Render makes the one item of the value: "key_value" is a
	// `key=value` line per entry of a mapping in the order the site's
	// Ansible gives (a role's template iterating `.items()`, as eessi's
	// cvmfs.config.j2 writes cvmfs_config); "lines" is a line per item
	// of a list, each formatted (`{% for %}` over it); "chrony_sources"
	// is a time source line per entry of mrlesmithjr.chrony's
	// chrony_ntp_servers, as its chrony.conf.j2 writes them; "flags" is
	// the items, each formatted, as words of a unit's ExecStart (quoted
	// where systemd would split them), each after a space;
	// "collector_flags" are node_exporter's enabled collectors so, as
	// prometheus.prometheus.node_exporter's unit template makes them;
	// "grafana_dashboards" are the grafana-dashboards role's entries as
	// the grafana_dashboards content kind's items (the whole list);
	// "firewalld_zone" is the public zone's file once the firewalld role's
	// rules (firewalld_configs) are applied; "words" is the items of a
	// list joined by a space (`join(' ')`), then formatted.
	Render string `yaml:"render"`
	// Pins maps the value to the item (a version to the sha256 the
	// plugin pins for it): a value with no pin gives an empty item, so
	// the item the group then holds must be replaced by the template's
	// (Unpinned names it).
	Pins map[string]string `yaml:"pins"`
	// PinNames: the values are package names, each given the version of
	// the item of the same name it replaces (ansible becomes
	// ansible==8.7.0): a site's list keeps the plugin's pins. A value
	// with its own version specifier stays as it is; a name without a
	// pin is an error naming it.
	PinNames bool `yaml:"pin_names"`
	// Bases maps the start of a value to what stands for it in the
	// group's data ("https://github.com/" to "{{github_releases_url}}/"):
	// a value on the appliance's default host then follows the mirror
	// option the template sets; a site's own URL stays as it is.
	Bases map[string]string `yaml:"bases"`
	// Text: the value is the variable as the role's template prints it
	// (`{{ var }}`), asked of the site's Ansible as text: a float keeps
	// its form (chrony_maxupdateskew's 100.0). A single value.
	Text bool `yaml:"text"`
	// Drop: Into is an element of a content list (content/git_checkouts/0)
	// that the build leaves out when When does not hold (the Open
	// OnDemand apps the site's ood_install_apps does not name).
	Drop bool `yaml:"drop"`
	// Task is a file of Role's tasks/ whose package task names the items
	// as written (no variable holds them): the one dnf task there that
	// names a package of Items, version aside. Its whole list replaces
	// Items (vnc_compute.yml's turbovnc-3.0.1, so a bump of the pin in
	// the site's checkout reaches the image).
	Task string `yaml:"task"`
	// FallbackGroups: a Drop element that, without a site's appliance,
	// the build keeps only when it has one of these built-in groups, the
	// groups the built-in value is for (firewalld_configs_default's rule
	// is openhpc's).
	FallbackGroups []string `yaml:"fallback_groups"`
}

// LocalUsers is the appliance variable of the users bootstrap.yml
// creates, and the built-in users it stands for.
type LocalUsers struct {
	Var string `yaml:"var"`
	// Role is the role whose defaults are in scope ("" none).
	Role  string   `yaml:"role"`
	Users []string `yaml:"users"`
}

// ExtraRepos are the appliance variables of a site's own repositories:
// dnf_repos_extra (the dnf_repos role's format: per repository, per OS
// version or major, pulp_path, pulp_timestamp, repo_file and optionally
// repo_name, pulp_content_url, gpgcheck) and the content URL its entries
// default to.
type ExtraRepos struct {
	Var        string `yaml:"var"`
	ContentURL string `yaml:"content_url"`
}

// ApplianceBinaryVars are the built-in binaries whose version an
// appliance variable pins (VersionVar, and ChecksumVar its sha256), by
// binary.
func ApplianceBinaryVars() map[string]Binary {
	out := map[string]Binary{}
	for name, b := range builtin().Binaries {
		if b.VersionVar != "" {
			out[name] = b
		}
	}
	return out
}

// ApplianceRepos are the vendor repositories groups take from the
// appliance's variables with a site's appliance, by group.
func ApplianceRepos() map[string][]NeededRepo {
	out := map[string][]NeededRepo{}
	for name, g := range builtin().Groups {
		for _, r := range g.NeedsRepos {
			if r.Var != "" {
				out[name] = append(out[name], r)
			}
		}
	}
	return out
}

// SiteRole is the appliance role doing group name's work with a site's
// appliance ("" none: the group is built natively).
func SiteRole(name string) string { return builtin().Groups[name].SiteRole }

// ApplianceExtraRepos is the extra repositories' source.
func ApplianceExtraRepos() ExtraRepos { return builtin().ExtraRepos }

// Lookup answers what the site's Ansible resolved: a variable's value in
// a role's scope (defined false when no such variable exists) and whether
// a condition holds there.
type Lookup interface {
	Value(role, name string) (v any, defined bool, err error)
	Holds(role, cond string) (bool, error)
	// Keys are a mapping value's keys in the site's Ansible's order.
	Keys(role, name string) []string
	// Text is a variable as a template prints it (`{{ name }}`).
	Text(role, name string) (text string, defined bool, err error)
	// TaskPackages are the package lists of the package tasks in role's
	// tasks/file, as written.
	TaskPackages(role, file string) ([][]string, error)
}

// Applied is one source as applied: the values it gave.
type Applied struct {
	Group string
	ApplianceVar
	Values []string
}

// ApplianceLocalUsers is the local users' source.
func ApplianceLocalUsers() LocalUsers { return builtin().LocalUsers }

// AppliancePodmanUsers is the source of the users the podman role makes.
func AppliancePodmanUsers() LocalUsers { return builtin().PodmanUsers }

// Sources are every group's sources, by group name, sorted by group.
func ApplianceVars() map[string][]ApplianceVar {
	out := map[string][]ApplianceVar{}
	for name, g := range builtin().Groups {
		if len(g.Appliance) > 0 {
			out[name] = g.Appliance
		}
	}
	return out
}

// WithAppliance is g with its sources' values taken from the appliance;
// the errors name the group and the variable.
func WithAppliance(g Group, look Lookup) (Group, []Applied, error) {
	var errs []error
	var applied []Applied
	out := g
	out.Packages = slices.Clone(g.Packages)
	out.UserDefs = maps.Clone(g.UserDefs)
	for _, s := range g.Appliance {
		// a user a source sets starts as the users table has it
		if name, _, ok := userField(s.Into); ok && out.UserDefs[name].Name == "" {
			if out.UserDefs == nil {
				out.UserDefs = map[string]User{}
			}
			out.UserDefs[name], _ = LookupUser(name)
		}
	}
	if g.Content != nil {
		out.Content = deepCopy(g.Content).(map[string]any)
	}
	var drops []string
	for _, s := range g.Appliance {
		var vals []string
		var err error
		if s.Drop {
			var holds bool
			if holds, err = look.Holds(s.Role, s.When); err == nil {
				vals = []string{"kept"}
				if !holds {
					vals, drops = []string{"left out"}, append(drops, s.Into)
				}
			}
		} else if vals, err = s.values(look); err == nil {
			err = out.put(s, vals)
			if s.Latest != "" && slices.Contains(vals, s.Latest) {
				out.Latest = append(slices.Clip(out.Latest), s.Latest)
			}
		}
		if err != nil {
			// a variable several sources read fails once
			if e := fmt.Errorf("group %q: %s: %w", g.Name, s.Label(), err); !slices.ContainsFunc(errs, func(x error) bool { return x.Error() == e.Error() }) {
				errs = append(errs, e)
			}
			continue
		}
		applied = append(applied, Applied{Group: g.Name, ApplianceVar: s, Values: vals})
	}
	// after every source: the indices they name are the table's
	if err := out.drop(drops); err != nil {
		errs = append(errs, fmt.Errorf("group %q: %w", g.Name, err))
	}
	return out, renumber(applied, drops), errors.Join(errs...)
}

// WithoutAppliance are groups as a build without a site's appliance has
// them: a Drop source's element is left out when none of its
// FallbackGroups is among the groups.
func WithoutAppliance(groups []Group) ([]Group, error) {
	present := map[string]bool{}
	for _, g := range groups {
		present[g.Name] = true
	}
	out := slices.Clone(groups)
	for i, g := range out {
		var drops []string
		for _, s := range g.Appliance {
			if s.Drop && len(s.FallbackGroups) > 0 && !slices.ContainsFunc(s.FallbackGroups, func(n string) bool { return present[n] }) {
				drops = append(drops, s.Into)
			}
		}
		if len(drops) == 0 {
			continue
		}
		g.Content = deepCopy(g.Content).(map[string]any)
		if err := g.drop(drops); err != nil {
			return nil, fmt.Errorf("group %q: %w", g.Name, err)
		}
		out[i] = g
	}
	return out, nil
}

// renumber makes the applied sources' paths name the elements where
// they are once the dropped ones are left out; the sources of a dropped
// element go with it (its drop stays, at the table's index).
func renumber(applied []Applied, drops []string) []Applied {
	var out []Applied
	for _, a := range applied {
		list, n, tail, ok := elementOf(a.Into)
		if a.Drop || !ok {
			out = append(out, a)
			continue
		}
		before, gone := 0, false
		for _, d := range drops {
			if dl, i, _, _ := elementOf(d); dl == list {
				gone = gone || i == n
				if i < n {
					before++
				}
			}
		}
		if !gone {
			a.Into = list + "/" + strconv.Itoa(n-before) + tail
			out = append(out, a)
		}
	}
	return out
}

// elementOf splits content/<list>/<index>[/rest] (a list of the content
// with a key, not nested in another list).
func elementOf(into string) (list string, idx int, tail string, ok bool) {
	parts := strings.SplitN(into, "/", 4)
	if len(parts) < 3 || parts[0] != "content" {
		return "", 0, "", false
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil {
		return "", 0, "", false
	}
	if len(parts) == 4 {
		tail = "/" + parts[3]
	}
	return parts[0] + "/" + parts[1], n, tail, true
}

// drop leaves out the content list elements at the paths (each
// content/<list path>/<index>).
func (g *Group) drop(paths []string) error {
	lists := map[string][]any{}
	for _, into := range paths {
		parent, key, idx, err := g.element(into)
		if err != nil {
			return err
		}
		list := parent[key].([]any)
		list[idx] = nil
		lists[into[:strings.LastIndex(into, "/")]] = list
	}
	for into, list := range lists {
		parent, key, _, _ := g.element(into + "/0")
		parent[key] = slices.DeleteFunc(list, func(e any) bool { return e == nil })
	}
	return nil
}

// element is the map holding the list that the content path into ends
// in an index of, the list's key and the index.
func (g *Group) element(into string) (map[string]any, string, int, error) {
	path, ok := strings.CutPrefix(into, "content/")
	i := strings.LastIndex(path, "/")
	if !ok || i < 0 {
		return nil, "", 0, fmt.Errorf("drop %q: not a content list element", into)
	}
	parent, key, err := walk(g.Content, strings.Split(path[:i], "/"))
	if err != nil {
		return nil, "", 0, err
	}
	list, _ := parent[key].([]any)
	n, err := strconv.Atoi(path[i+1:])
	if err != nil || n < 0 || n >= len(list) {
		return nil, "", 0, fmt.Errorf("drop %q: no such element", into)
	}
	return parent, key, n, nil
}

// Label names the source in errors: the variable (and key) and role.
func (s ApplianceVar) Label() string {
	l := s.Var
	if s.Key != "" {
		l += "." + s.Key
	}
	switch {
	case s.Task != "":
		l = "the package task of tasks/" + s.Task
	case l == "":
		l = "when " + s.When
	}
	if s.Role != "" {
		l += " (role " + s.Role + ")"
	}
	return l
}

// values are the source's items from the appliance.
func (s ApplianceVar) values(look Lookup) ([]string, error) {
	if s.When != "" {
		holds, err := look.Holds(s.Role, s.When)
		if err != nil || !holds {
			return nil, err
		}
	}
	if s.Task != "" {
		return s.taskItems(look)
	}
	if s.Var == "" {
		return slices.Clone(s.Items), nil
	}
	if s.Text {
		text, defined, err := look.Text(s.Role, s.Var)
		if err == nil && !defined {
			err = errNotDefined
		}
		if s.Format != "" {
			text = strings.ReplaceAll(s.Format, "{}", text)
		}
		return []string{text}, err
	}
	v, err := s.value(look)
	if err != nil {
		return nil, err
	}
	switch s.Render {
	case renderKeyValue:
		text, err := keyValueLines(v, look.Keys(s.Role, s.Var))
		return []string{text}, err
	case renderChrony:
		text, err := chronySourceLines(v)
		return []string{text}, err
	case renderDashboards:
		return dashboardValues(v)
	case renderFirewalld:
		text, err := firewalldZone(v)
		return []string{text}, err
	case renderCollectors:
		flags, err := collectorFlags(v)
		if err != nil {
			return nil, err
		}
		text, err := execWords(flags)
		return []string{text}, err
	}
	items, err := Strings(v)
	if err != nil {
		return nil, err
	}
	if s.Pins != nil {
		if len(items) != 1 {
			return nil, fmt.Errorf("%d values, want one", len(items))
		}
		return []string{s.Pins[items[0]]}, nil
	}
	if s.Render == renderWords {
		items = []string{strings.Join(items, " ")}
	}
	s.format(items)
	switch s.Render {
	case renderLines:
		return []string{lines(items)}, nil
	case renderFlags:
		text, err := execWords(items)
		return []string{text}, err
	}
	return items, nil
}

// value is the source's variable's value, at Key when it has one.
func (s ApplianceVar) value(look Lookup) (any, error) {
	v, defined, err := look.Value(s.Role, s.Var)
	if err != nil {
		return nil, err
	}
	if !defined {
		return nil, errNotDefined
	}
	for _, k := range strings.Split(s.Key, ".") {
		if k == "" {
			continue
		}
		m, _ := v.(map[string]any)
		if v, defined = m[k]; !defined {
			return nil, fmt.Errorf("no %s in its value", s.Key)
		}
	}
	return v, nil
}

// taskItems are the package names of the one package task of the
// source's task file that names a package of Items.
func (s ApplianceVar) taskItems(look Lookup) ([]string, error) {
	lists, err := look.TaskPackages(s.Role, s.Task)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, it := range s.Items {
		want[packageName(it)] = true
	}
	var found [][]string
	for _, l := range lists {
		if slices.ContainsFunc(l, func(n string) bool { return want[packageName(n)] }) {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%d package tasks name one of %s, want one", len(found), strings.Join(slices.Sorted(maps.Keys(want)), ", "))
	}
	for _, n := range found[0] {
		if strings.Contains(n, "{{") {
			return nil, fmt.Errorf("package %q is templated: the plugin reads a task's packages as written", n)
		}
	}
	items := slices.Clone(found[0])
	s.format(items)
	return items, nil
}

// packageName is a package spec without its version: turbovnc-3.0.1 and
// turbovnc-3.1.4-20250702 are turbovnc (a dash before a digit starts the
// version; dbus-x11 and python3.9 have none).
func packageName(spec string) string {
	for {
		i := strings.LastIndex(spec, "-")
		if i <= 0 || i+1 == len(spec) || spec[i+1] < '0' || spec[i+1] > '9' {
			return spec
		}
		spec = spec[:i]
	}
}

// errNotDefined is a source's variable the site's Ansible does not know.
var errNotDefined = errors.New("not defined in the appliance (a role or group_vars the plugin expects is missing)")

// lines are items a line each.
func lines(items []string) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it + "\n")
	}
	return b.String()
}

// format makes each value its item: Latest, Format, Bases.
func (s ApplianceVar) format(items []string) {
	for i, it := range items {
		switch {
		case s.Latest != "" && it == "latest":
			items[i] = s.Latest
		case s.Format != "":
			items[i] = strings.ReplaceAll(s.Format, "{}", it)
		}
		for _, from := range slices.Sorted(maps.Keys(s.Bases)) {
			if rest, ok := strings.CutPrefix(items[i], from); ok {
				items[i] = s.Bases[from] + rest
				break
			}
		}
	}
}

// Unpinned is an item whose pin a source with Pins had none for the
// appliance's value: the content option and the index of the item.
type Unpinned struct {
	Source ApplianceVar
	Option string
	Index  int
}

// Unpinned are the items of g (with the appliance's values) that the
// template must replace, their sources having no pin for the value.
func (g Group) Unpinned() []Unpinned {
	var out []Unpinned
	for _, s := range g.Appliance {
		path, _ := strings.CutPrefix(s.Into, "content/")
		parent, key, err := walk(g.Content, strings.Split(path, "/"))
		list, i, _, ok := elementOf(s.Into)
		if s.Pins == nil || err != nil || !ok || parent[key] != "" {
			continue
		}
		out = append(out, Unpinned{Source: s, Option: strings.TrimPrefix(list, "content/"), Index: i})
	}
	return out
}

// ApplianceVar.Render's ways to make one item of a value.
const (
	renderKeyValue   = "key_value"
	renderLines      = "lines"
	renderChrony     = "chrony_sources"
	renderFlags      = "flags"
	renderWords      = "words"
	renderCollectors = "collector_flags"
	renderDashboards = "grafana_dashboards"
	renderFirewalld  = "firewalld_zone"
)

// renders are ApplianceVar.Render's values.
var renders = []string{renderKeyValue, renderLines, renderChrony, renderFlags, renderWords, renderCollectors, renderDashboards, renderFirewalld}

// keyValueLines is mapping v as `{% for k, v in m.items() %}{{ k }}={{ v
// }}` renders it (Ansible's trim_blocks: a line each), keys in order.
func keyValueLines(v any, keys []string) (string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("%v is not a mapping", v)
	}
	if len(keys) != len(m) {
		return "", fmt.Errorf("the order of its keys is not known (%d keys, %d in order)", len(m), len(keys))
	}
	var b strings.Builder
	for _, k := range keys {
		text, err := jinjaText(m[k])
		if err != nil {
			return "", fmt.Errorf("%s: %w", k, err)
		}
		fmt.Fprintf(&b, "%s=%s\n", k, text)
	}
	return b.String(), nil
}

// jinjaText is a single value as `{{ x }}` prints it.
func jinjaText(x any) (string, error) {
	switch y := x.(type) {
	case string:
		return y, nil
	case float64:
		return strconv.FormatFloat(y, 'f', -1, 64), nil
	case bool:
		return map[bool]string{true: "True", false: "False"}[y], nil // Python's str()
	case nil:
		return "None", nil
	}
	return "", fmt.Errorf("%v is not a single value", x)
}

// mappings is a list of entries each a mapping (a role's list of
// dicts), refused naming the first item that is not.
func mappings(v any) ([]map[string]any, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%v is not a list", v)
	}
	out := make([]map[string]any, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("[%d]: %v is not a mapping", i, e)
		}
		out[i] = m
	}
	return out, nil
}

// chronySourceLines is mrlesmithjr.chrony's chrony_ntp_servers as its
// chrony.conf.j2 writes them: per entry `{{ type | default('server') }}
// {{ server }}`, then ` {{ option }}` and ` {{ val }}` (when defined) of
// each of its options, a line each.
func chronySourceLines(v any) (string, error) {
	entries, err := mappings(v)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, m := range entries {
		words := []any{"server", m["server"]}
		if t, ok := m["type"]; ok {
			words[0] = t
		}
		if _, ok := m["server"]; !ok {
			return "", fmt.Errorf("[%d]: no server", i)
		}
		opts, ok := m["options"].([]any)
		if _, defined := m["options"]; defined && !ok {
			return "", fmt.Errorf("[%d]: options %v is not a list", i, m["options"])
		}
		for _, o := range opts {
			om, _ := o.(map[string]any)
			if _, ok := om["option"]; !ok {
				return "", fmt.Errorf("[%d]: an option without option: %v", i, o)
			}
			words = append(words, om["option"])
			if val, ok := om["val"]; ok {
				words = append(words, val)
			}
		}
		for j, w := range words {
			text, err := jinjaText(w)
			if err != nil {
				return "", fmt.Errorf("[%d]: %w", i, err)
			}
			b.WriteString(map[bool]string{true: " "}[j > 0] + text)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// Strings is a resolved value as a list of strings: a string is one
// item, a list's empty items are dropped (Ansible's `select`).
func Strings(v any) ([]string, error) {
	scalar := func(x any) (string, error) {
		switch y := x.(type) {
		case string:
			return y, nil
		case float64:
			return strconv.FormatFloat(y, 'f', -1, 64), nil
		case nil:
			return "", nil
		}
		return "", fmt.Errorf("%v is not a string", x)
	}
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	var out []string
	for _, x := range list {
		s, err := scalar(x)
		if err != nil {
			return nil, err
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// put replaces the source's items of its list with vals.
func (g *Group) put(s ApplianceVar, vals []string) error {
	items := s.Items
	if len(items) == 0 && s.When != "" {
		items = []string{} // adds to the list, replacing nothing
	}
	if list := g.namedList(s.Into); list != nil {
		*list = splice(*list, items, vals)
		return nil
	}
	if name, field, ok := userField(s.Into); ok {
		return g.putUser(name, field, vals)
	}
	path, ok := strings.CutPrefix(s.Into, "content/")
	if !ok {
		return fmt.Errorf("into %q: %s", s.Into, notAList)
	}
	parent, key, err := walk(g.Content, strings.Split(path, "/"))
	if err != nil {
		return err
	}
	if s.Render == renderDashboards {
		parent[key], err = fromJSON(vals)
		return err
	}
	if cur, scalar := parent[key].(string); scalar {
		if len(vals) == 0 && s.Var == "" && s.Within != "" {
			// a condition's text that does not hold: out of the value
			parent[key] = strings.ReplaceAll(cur, s.Within, "")
			return nil
		}
		if len(vals) != 1 {
			return fmt.Errorf("%d values for the one value of %s", len(vals), s.Into)
		}
		parent[key] = vals[0]
		switch {
		case s.Insert:
			parent[key] = strings.ReplaceAll(cur, s.Within, vals[0]+s.Within)
		case s.Within != "":
			parent[key] = strings.ReplaceAll(cur, s.Within, vals[0])
		}
		return nil
	}
	cur, _ := Strings(parent[key])
	if s.PinNames {
		if vals, err = pinNames(vals, cur); err != nil {
			return err
		}
	}
	var list []any
	for _, v := range splice(cur, items, vals) {
		list = append(list, v)
	}
	parent[key] = list
	return nil
}

// userFields are the fields of a built-in user a source may set.
var userFields = []string{"name", "group", "home"}

// userField splits into "users/<name>/<field>".
func userField(into string) (name, field string, ok bool) {
	rest, ok := strings.CutPrefix(into, "users/")
	if !ok {
		return "", "", false
	}
	name, field, ok = strings.Cut(rest, "/")
	return name, field, ok
}

// reUserName is a user or group name useradd takes (its default
// NAME_REGEX, as the provisioner's users option checks them).
var reUserName = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// putUser sets a field of the group's built-in user name to the one
// value; the user keeps its fixed ids, shell and the rest.
func (g *Group) putUser(name, field string, vals []string) error {
	if len(vals) != 1 {
		return fmt.Errorf("%d values for the user %s's %s", len(vals), name, field)
	}
	u, ok := g.UserDefs[name]
	if !ok {
		return fmt.Errorf("the user %s is not the group's", name)
	}
	v := vals[0]
	switch {
	case field == "home" && (!path.IsAbs(v) || path.Clean(v) != v):
		return fmt.Errorf("%q is not an absolute, clean path for the user %s's home", v, name)
	case field != "home" && !reUserName.MatchString(v):
		return fmt.Errorf("%q is not a valid %s name for the user %s", v, map[string]string{"name": "user", "group": "group"}[field], name)
	}
	switch field {
	case "name":
		u.Name = v
	case "group":
		u.Group = v
	case "home":
		u.Home = v
	}
	g.UserDefs[name] = u
	return nil
}

// reSpecifier is where a requirement's version specifier (or extras,
// or environment marker) starts after its name.
var reSpecifier = regexp.MustCompile(`[\s\[<>=!~;@]`)

// pinNames gives each bare name of vals the requirement of the same
// name in pinned (ansible==8.7.0), as PinNames says; a value with a
// specifier stays.
func pinNames(vals, pinned []string) ([]string, error) {
	out := slices.Clone(vals)
	var unpinned []string
	for i, v := range vals {
		if reSpecifier.MatchString(v) {
			continue
		}
		j := slices.IndexFunc(pinned, func(p string) bool {
			name, _, _ := strings.Cut(p, "==")
			return normName(name) == normName(v)
		})
		if j < 0 {
			unpinned = append(unpinned, v)
			continue
		}
		out[i] = pinned[j]
	}
	if len(unpinned) > 0 {
		return nil, fmt.Errorf("%s: the plugin pins no version of %s: give it one in the site's list (name==version), as the plugin pins %s",
			strings.Join(unpinned, ", "), map[bool]string{true: "it", false: "them"}[len(unpinned) == 1], strings.Join(pinned, ", "))
	}
	return out, nil
}

// normName is a Python package name as pip compares them (PEP 503).
func normName(n string) string {
	return strings.ToLower(reNameSeparators.ReplaceAllString(n, "-"))
}

var reNameSeparators = regexp.MustCompile(`[-_.]+`)

// notAList says what ApplianceVar.Into may name.
const notAList = "not packages, no_weak_deps, modules, grafana_plugins, remove nor a content path"

// namedList is the group's list Into names, nil for a content path.
func (g *Group) namedList(into string) *[]string {
	switch into {
	case "packages":
		return &g.Packages
	case "no_weak_deps":
		return &g.NoWeakDeps
	case "modules":
		return &g.Modules
	case "grafana_plugins":
		return &g.GrafanaPlugins
	case "remove":
		return &g.Remove
	}
	return nil
}

// splice removes items from list and puts vals where the first was (at
// the end when none was there); nil items: vals replace the whole list.
func splice(list, items, vals []string) []string {
	if items == nil {
		return slices.Clone(vals)
	}
	at := len(list)
	var out []string
	for i, it := range list {
		if slices.Contains(items, it) {
			at = min(at, i)
			continue
		}
		out = append(out, it)
	}
	at = min(at, len(out))
	return slices.Concat(out[:at], vals, out[at:])
}

// walk follows path through decoded YAML to the map holding its last key.
func walk(v any, path []string) (map[string]any, string, error) {
	for i, p := range path {
		switch x := v.(type) {
		case map[string]any:
			if i == len(path)-1 {
				return x, p, nil
			}
			v = x[p]
		case []any:
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 || n >= len(x) {
				return nil, "", fmt.Errorf("content path: %q is not an index of a %d-item list", p, len(x))
			}
			v = x[n]
		default:
			return nil, "", fmt.Errorf("content path: nothing at %q", strings.Join(path[:i+1], "/"))
		}
	}
	return nil, "", errors.New("content path: empty")
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// check is what mustLoad holds a group's sources to: a list to go into,
// and every item named there.
func (g Group) checkSources(users map[string]User) error {
	for _, s := range g.Appliance {
		if s.Drop {
			if s.Var != "" || s.When == "" {
				return fmt.Errorf("appliance source into %s: drop takes a condition and no variable", s.Into)
			}
			if _, _, _, err := g.element(s.Into); err != nil {
				return err
			}
			continue
		}
		if len(s.FallbackGroups) > 0 {
			return fmt.Errorf("appliance source %s: fallback groups are a drop's", s.Label())
		}
		if s.Task != "" && (s.Var != "" || s.Role == "" || len(s.Items) == 0 || s.Render != "" || s.Key != "" || s.Text || s.Pins != nil || s.PinNames || s.Within != "") {
			return fmt.Errorf("appliance source into %s: a task's packages need its role and the items they replace, and no variable", s.Into)
		}
		if s.Var == "" && s.Task == "" && (s.When == "" || len(s.Items) == 0) {
			return fmt.Errorf("appliance source into %s: neither a variable nor a condition with items", s.Into)
		}
		if s.Render != "" && (!slices.Contains(renders, s.Render) || s.Key != "" || s.Var == "") {
			return fmt.Errorf("appliance source %s: render %q: only %s, of a whole variable", s.Var, s.Render, strings.Join(renders, ", "))
		}
		if len(s.VarsFiles) > 0 && s.Role == "" {
			return fmt.Errorf("appliance source %s: vars files are a role's", s.Var)
		}
		if s.Text && (s.Render != "" || s.Key != "" || s.Pins != nil || s.PinNames || s.Latest != "" || s.Bases != nil) {
			return fmt.Errorf("appliance source %s: text is the variable as a template prints it, formatted only", s.Var)
		}
		if s.Insert && s.Within == "" {
			return fmt.Errorf("appliance source %s: insert goes before the text within names, and there is none", s.Var)
		}
		if (s.Pins != nil || s.PinNames) && (s.Render != "" || s.Format != "" || s.Within != "" || !strings.HasPrefix(s.Into, "content/")) {
			return fmt.Errorf("appliance source %s: pins and pin_names take the value as it is, into content", s.Var)
		}
		if s.Latest != "" && s.Into != "packages" {
			return fmt.Errorf("appliance source %s: latest names a package, into %q is not packages", s.Var, s.Into)
		}
		var cur []string
		if list := g.namedList(s.Into); list != nil {
			cur = *list
		} else if name, field, ok := userField(s.Into); ok {
			u, found := users[name]
			if !found || !slices.Contains(g.Users, name) || !slices.Contains(userFields, field) || s.Render != "" || s.Within != "" || len(s.Items) != 1 {
				return fmt.Errorf("appliance source %s: into %q: a built-in user of the group's, its %s, and the one item it replaces", s.Var, s.Into, strings.Join(userFields, ", "))
			}
			cur = []string{map[string]string{"name": name, "group": u.Group, "home": u.Home}[field]}
		} else {
			path, ok := strings.CutPrefix(s.Into, "content/")
			if !ok {
				return fmt.Errorf("appliance source %s: into %q: %s", s.Var, s.Into, notAList)
			}
			parent, key, err := walk(g.Content, strings.Split(path, "/"))
			if err != nil {
				return fmt.Errorf("appliance source %s: %w", s.Var, err)
			}
			cur, _ = Strings(parent[key])
			if s.Within != "" && (len(cur) != 1 || !strings.Contains(cur[0], s.Within)) {
				return fmt.Errorf("appliance source %s: %q is not within %s", s.Var, s.Within, s.Into)
			}
		}
		for _, it := range s.Items {
			if (s.Var != "" || s.Task != "") && !slices.Contains(cur, it) {
				return fmt.Errorf("appliance source %s: item %q is not in %s", s.Var, it, s.Into)
			}
		}
	}
	return nil
}

// WholeLists are the content lists (grafana_dashboards) that a source of
// g replaces whole: the site's variable composes the list, so it stands
// for the items the group's with_option and with_group sets add to it.
func (g Group) WholeLists() []string {
	var out []string
	for _, s := range g.Appliance {
		list, ok := strings.CutPrefix(s.Into, "content/")
		if ok && s.Var != "" && s.When == "" && len(s.Items) == 0 && !strings.Contains(list, "/") {
			out = append(out, list)
		}
	}
	return out
}

// Without is g without the content lists named.
func (g Group) Without(lists []string) Group {
	if len(lists) == 0 || g.Content == nil {
		return g
	}
	out := g
	out.Content = maps.Clone(g.Content)
	for _, l := range lists {
		delete(out.Content, l)
	}
	return out
}
