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

// groupSet is what one inventory group puts into an image.
type groupSet struct {
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
	Groups   map[string]groupSet `yaml:"groups"`
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
	groupSet
	users    []User
	binaries []Binary
}

// resolve expands groups and merges their sets.
func (s *packageSets) resolve(groups []string) (*resolved, error) {
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
		add("p", &r.Packages, set.Packages)
		add("r", &r.Remove, set.Remove)
		add("m", &r.Modules, set.Modules)
		add("e", &r.EnableRepos, set.EnableRepos)
		add("b", &r.Binaries, set.Binaries)
		add("g", &r.GrafanaPlugins, set.GrafanaPlugins)
		add("u", &r.Users, set.Users)
		add("s", &r.Services, set.Services)
		return nil
	}
	for _, g := range groups {
		if err := visit(g, 0); err != nil {
			return nil, err
		}
	}
	for _, u := range r.Users {
		usr := s.Users[u]
		usr.Name = u
		r.users = append(r.users, usr)
	}
	for _, b := range r.Binaries {
		bin := s.Binaries[b]
		bin.Name = b
		r.binaries = append(r.binaries, bin)
	}
	return r, nil
}
