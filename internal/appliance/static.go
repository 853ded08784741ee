package appliance

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/inventory"
)

// StaticGroups is the build host's groups as the environment's inventory
// files say, read without Ansible (for `packer validate`): the INI groups
// of the inventories the environment's ansible.cfg names, with the host in
// `builder` and the site's groups.
func (s *Site) StaticGroups() ([]string, error) {
	srcs, err := inventorySources(s.config())
	if err != nil {
		return nil, err
	}
	inv := inventory.New()
	if err := inv.Load(srcs...); err != nil {
		return nil, fmt.Errorf("environment %s: %w", s.Environment, err)
	}
	return inv.HostGroups(HostAlias, append([]string{"builder"}, s.Groups...)...), nil
}

// InventorySources are the inventories the environment's ansible.cfg
// names, in its order (common, site, environment in the appliance).
func (s *Site) InventorySources() ([]string, error) { return inventorySources(s.config()) }

// inventorySources reads [defaults] inventory of an ansible.cfg, relative
// entries against the file's directory.
func inventorySources(cfgFile string) ([]string, error) {
	defaults, err := readDefaults(cfgFile)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range strings.Split(defaults["inventory"], ",") {
		if p = strings.TrimSpace(p); p != "" {
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(cfgFile), p)
			}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no inventory in [defaults]", cfgFile)
	}
	return out, nil
}

// groupCondRE is a condition on group membership alone: `'x' in
// group_names`, possibly several joined by `or`.
var groupCondRE = regexp.MustCompile(`^\s*['"]([A-Za-z0-9_]+)['"]\s+in\s+group_names\s*$`)

// StaticRuns says, from the host's groups alone (StaticGroups), whether
// the build host runs the step: its play's host pattern and its
// conditions when they test group membership only. sure is false when a
// pattern or a condition needs Ansible (a variable, a fact, a registered
// result): the step may run. Hooks say only whether the file exists.
func StaticRuns(st Step, groups []string) (runs, sure bool) {
	if st.Kind == "hook" {
		return !st.Absent, true
	}
	match, sure := patternMatches(st.Hosts, groups)
	if !match && sure {
		return false, true
	}
	for _, c := range st.When {
		holds, decided := groupCondition(c, groups)
		if decided && !holds {
			return false, true
		}
		sure = sure && decided
	}
	return true, sure
}

func groupCondition(c string, groups []string) (holds, decided bool) {
	for _, alt := range strings.Split(c, " or ") {
		m := groupCondRE.FindStringSubmatch(alt)
		if m == nil {
			return false, false
		}
		if slices.Contains(groups, m[1]) {
			holds = true
		}
	}
	return holds, true
}

// patternMatches evaluates a play's host pattern for the build host as
// Ansible does under `--limit builder`: the union of the plain terms,
// narrowed by the `&` terms, less the `!` terms. Wildcards and regular
// expressions are left to Ansible (not sure).
func patternMatches(pattern string, groups []string) (match, sure bool) {
	in := func(term string) bool {
		return term == "all" || term == "*" || slices.Contains(groups, term) || term == HostAlias
	}
	union, and, not := false, true, false
	for _, term := range strings.FieldsFunc(pattern, func(r rune) bool { return r == ',' || r == ':' }) {
		term = strings.TrimSpace(term)
		if strings.ContainsAny(term, "*?[~{") && term != "*" {
			return true, false
		}
		switch {
		case strings.HasPrefix(term, "!"):
			not = not || in(term[1:])
		case strings.HasPrefix(term, "&"):
			and = and && in(term[1:])
		default:
			union = union || in(term)
		}
	}
	return union && and && !not, true
}
