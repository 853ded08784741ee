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

// packageSets is the embedded table of inventory groups and their packages.
type packageSets struct {
	Expands map[string][]string `yaml:"expands"`
	Groups  map[string][]string `yaml:"groups"`
	Remove  map[string][]string `yaml:"remove"`
	Modules map[string][]string `yaml:"modules"`
}

var builtinSets = mustLoadSets(packageSetsYAML)

func mustLoadSets(b []byte) *packageSets {
	var s packageSets
	if err := yaml.Unmarshal(b, &s); err != nil {
		panic("package_sets.yaml: " + err.Error())
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
	for n := range s.Remove {
		if _, ok := s.Groups[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// resolve returns the packages to install and remove for groups, each
// deduplicated in first-seen order.
func (s *packageSets) resolve(groups []string) (install, remove []string, err error) {
	install, remove, _, err = s.resolveAll(groups)
	return install, remove, err
}

// resolveAll also returns the module streams to enable.
func (s *packageSets) resolveAll(groups []string) (install, remove, modules []string, err error) {
	seen := map[string]bool{}
	seenRm := map[string]bool{}
	seenMod := map[string]bool{}
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
		pk, ok := s.Groups[g]
		rm, okRm := s.Remove[g]
		if !ok && !okRm {
			return fmt.Errorf("groups: unknown group %q (known groups: %s)", g, strings.Join(s.knownGroups(), ", "))
		}
		for _, p := range pk {
			if !seen[p] {
				seen[p] = true
				install = append(install, p)
			}
		}
		for _, m := range s.Modules[g] {
			if !seenMod[m] {
				seenMod[m] = true
				modules = append(modules, m)
			}
		}
		for _, p := range rm {
			if !seenRm[p] {
				seenRm[p] = true
				remove = append(remove, p)
			}
		}
		return nil
	}
	for _, g := range groups {
		if err := visit(g, 0); err != nil {
			return nil, nil, nil, err
		}
	}
	return install, remove, modules, nil
}
