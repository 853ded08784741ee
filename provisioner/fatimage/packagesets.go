package fatimage

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed package_sets.yaml
var packageSetsYAML []byte

// GroupSet is what one built-in inventory group puts into an image.
type GroupSet struct {
	Packages       []string `yaml:"packages"`
	Remove         []string `yaml:"remove"`
	Modules        []string `yaml:"modules"`
	EnableRepos    []string `yaml:"enable_repos"`
	Binaries       []string `yaml:"binaries"`
	GrafanaPlugins []string `yaml:"grafana_plugins"`
	Users          []string `yaml:"users"`
	Services       []string `yaml:"services"`
}

// packageSets is the embedded table of inventory groups.
type packageSets struct {
	Expands  map[string][]string `yaml:"expands"`
	Groups   map[string]GroupSet `yaml:"groups"`
	Users    map[string]User     `yaml:"users"`
	Binaries map[string]Binary   `yaml:"binaries"`
}

var builtinSets = mustLoadSets(packageSetsYAML)

func mustLoadSets(b []byte) *packageSets {
	var s packageSets
	if err := yaml.Unmarshal(b, &s); err != nil {
		panic("package_sets.yaml: " + err.Error())
	}
	for _, g := range s.Groups {
		for _, u := range g.Users {
			if _, ok := s.Users[u]; !ok {
				panic("package_sets.yaml: unknown user " + u)
			}
		}
		for _, b := range g.Binaries {
			if _, ok := s.Binaries[b]; !ok {
				panic("package_sets.yaml: unknown binary " + b)
			}
		}
	}
	return &s
}

// knownGroups lists every group name, sorted.
func (s *packageSets) knownGroups() []string {
	var names []string
	for n := range s.Groups {
		names = append(names, n)
	}
	for n := range s.Expands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// resolved is the union of the groups asked for, each list deduplicated
// in first-seen order.
type resolved struct {
	GroupSet
	users    []User
	binaries []Binary
}

// NamedGroup is a built-in group and its set.
type NamedGroup struct {
	Name string
	GroupSet
}

// BuiltinGroups expands names (groups such as control stand for others)
// into the built-in groups they mean, in order, each once.
func BuiltinGroups(names ...string) ([]NamedGroup, error) { return builtinSets.expand(names) }

// BuiltinUser is the built-in fixed-ID user of that name.
func BuiltinUser(name string) (User, bool) {
	u, ok := builtinSets.Users[name]
	u.Name = name
	return u, ok
}

// BuiltinBinary is the built-in release tarball of that name.
func BuiltinBinary(name string) (Binary, bool) {
	b, ok := builtinSets.Binaries[name]
	b.Name = name
	return b, ok
}

func (s *packageSets) expand(names []string) ([]NamedGroup, error) {
	var out []NamedGroup
	seen := map[string]bool{}
	var visit func(g string, depth int) error
	visit = func(g string, depth int) error {
		if depth > 8 {
			return fmt.Errorf("groups: %q expands too deeply", g)
		}
		if sub, ok := s.Expands[g]; ok {
			for _, x := range sub {
				if err := visit(x, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		set, ok := s.Groups[g]
		if !ok {
			return fmt.Errorf("groups: unknown group %q (known groups: %s)", g, strings.Join(s.knownGroups(), ", "))
		}
		if !seen[g] {
			seen[g] = true
			out = append(out, NamedGroup{g, set})
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

// resolve merges the sets of the groups names stand for.
func (s *packageSets) resolve(names []string) (*resolved, error) {
	groups, err := s.expand(names)
	if err != nil {
		return nil, err
	}
	r := &resolved{}
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
		add("r", &r.Remove, g.Remove)
		add("m", &r.Modules, g.Modules)
		add("e", &r.EnableRepos, g.EnableRepos)
		add("b", &r.Binaries, g.Binaries)
		add("g", &r.GrafanaPlugins, g.GrafanaPlugins)
		add("u", &r.Users, g.Users)
		add("s", &r.Services, g.Services)
	}
	for _, u := range r.Users {
		usr, _ := BuiltinUser(u)
		r.users = append(r.users, usr)
	}
	for _, b := range r.Binaries {
		bin, _ := BuiltinBinary(b)
		r.binaries = append(r.binaries, bin)
	}
	return r, nil
}
