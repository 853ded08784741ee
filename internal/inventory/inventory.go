// Package inventory reads an Ansible INI inventory's group structure
// (the appliance's environments/*/inventory/groups files) and answers
// which groups a host belongs to, as Ansible would: a host is in every
// group it is listed in or given, in every group having such a group as
// a (transitive) child, and in `all`.
//
// Only the group structure is read: `[g]` sections (host lines), `[g:children]`
// and `[g:vars]` (skipped). Several sources merge as Ansible merges
// several inventory sources: later files add to, never replace, what
// earlier ones define.
package inventory

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Inventory is the merged group structure of some sources.
type Inventory struct {
	// children maps a group to its child groups.
	children map[string][]string
	// hosts maps a group to the hosts listed in it.
	hosts map[string][]string
	// defined holds every group named by a section header or as a child.
	defined map[string]bool
	// sections holds the groups with a section header.
	sections map[string]bool
}

// New is an empty inventory (only `all` and `ungrouped` exist, as in Ansible).
func New() *Inventory {
	return &Inventory{children: map[string][]string{}, hosts: map[string][]string{},
		defined: map[string]bool{"all": true, "ungrouped": true}, sections: map[string]bool{"all": true, "ungrouped": true}}
}

// rejected are the file endings Ansible's INVENTORY_IGNORE_EXTS skips in
// an inventory directory.
var rejected = []string{"~", ".orig", ".bak", ".cfg", ".retry", ".pyc", ".pyo", ".swp", ".rpm", ".md", ".txt", ".rst", ".ini"}

// Load reads the sources in order. A source is an INI file or a
// directory; a directory contributes its INI files in name order,
// skipping group_vars/host_vars, hidden files, Ansible's ignored endings
// and YAML/JSON files (OpenTofu's generated host lists, which name
// cluster nodes, never the build VM).
func (inv *Inventory) Load(sources ...string) error {
	for _, src := range sources {
		st, err := os.Stat(src)
		if err != nil {
			return err
		}
		if !st.IsDir() {
			if err := inv.loadFile(src); err != nil {
				return err
			}
			continue
		}
		ents, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range ents { // ReadDir sorts by name, as Ansible does
			n := e.Name()
			if e.IsDir() || strings.HasPrefix(n, ".") || skipped(n) {
				continue
			}
			if err := inv.loadFile(filepath.Join(src, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

func skipped(name string) bool {
	for _, ext := range append(rejected, ".yml", ".yaml", ".json") {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

func (inv *Inventory) loadFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	group, kind := "ungrouped", "hosts"
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 || strings.TrimSpace(line[end+1:]) != "" && !strings.HasPrefix(strings.TrimSpace(line[end+1:]), "#") {
				return fmt.Errorf("%s:%d: invalid section header %q", path, n, line)
			}
			name := line[1:end]
			group, kind = name, "hosts"
			if g, k, ok := strings.Cut(name, ":"); ok {
				group, kind = g, k
			}
			switch kind {
			case "hosts", "children", "vars":
			default:
				return fmt.Errorf("%s:%d: section %q: unknown kind %q (hosts, children or vars)", path, n, name, kind)
			}
			if group == "" || strings.ContainsAny(group, " \t") {
				return fmt.Errorf("%s:%d: invalid group name %q", path, n, group)
			}
			if kind != "vars" {
				inv.defined[group] = true
				inv.sections[group] = true
			}
			continue
		}
		// a line's first token is a host, a child group or a variable name;
		// an inline comment follows whitespace
		tok := strings.Fields(line)[0]
		switch kind {
		case "children":
			if tok == group {
				return fmt.Errorf("%s:%d: group %q cannot be its own child", path, n, group)
			}
			inv.defined[tok] = true
			inv.children[group] = appendUnique(inv.children[group], tok)
		case "hosts":
			if strings.ContainsAny(tok, "/=\"'") {
				// the line itself is not shown: the file may be anything
				return fmt.Errorf("%s:%d: not a host name, group or section header: not an Ansible INI inventory", path, n)
			}
			inv.hosts[group] = appendUnique(inv.hosts[group], tok)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return inv.checkCycles()
}

func appendUnique(l []string, s string) []string {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}

// checkCycles refuses a group that is its own descendant, as Ansible
// refuses "a recursive dependency loop".
func (inv *Inventory) checkCycles() error {
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var visit func(g string, path []string) error
	visit = func(g string, path []string) error {
		switch state[g] {
		case visiting:
			return fmt.Errorf("groups form a loop: %s", strings.Join(append(path, g), " -> "))
		case done:
			return nil
		}
		state[g] = visiting
		for _, c := range inv.children[g] {
			if err := visit(c, append(path, g)); err != nil {
				return err
			}
		}
		state[g] = done
		return nil
	}
	for _, g := range inv.Groups() {
		if err := visit(g, nil); err != nil {
			return err
		}
	}
	return nil
}

// Groups lists every group the inventory knows, sorted.
func (inv *Inventory) Groups() []string {
	var out []string
	for g := range inv.defined {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// Defined reports whether the inventory names the group.
func (inv *Inventory) Defined(g string) bool { return inv.defined[g] }

// HostGroups is the sorted set of groups a host is in when it is also
// given the groups direct (the way Packer's Ansible provisioner puts
// its host in `groups`): those, the groups listing the host, every
// ancestor of any of them, and `all`. A host in no group at all would be
// in `ungrouped`; a build host always has `direct`.
func (inv *Inventory) HostGroups(host string, direct ...string) []string {
	parents := map[string][]string{}
	for p, cs := range inv.children {
		for _, c := range cs {
			parents[c] = append(parents[c], p)
		}
	}
	in := map[string]bool{"all": true}
	var up func(g string)
	up = func(g string) {
		if in[g] {
			return
		}
		in[g] = true
		for _, p := range parents[g] {
			up(p)
		}
	}
	for _, g := range direct {
		up(g)
	}
	for g, hs := range inv.hosts {
		for _, h := range hs {
			if h == host {
				up(g)
			}
		}
	}
	if len(in) == 1 {
		in["ungrouped"] = true
	}
	var out []string
	for g := range in {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// HasSection reports whether some file gives the group a section header
// of its own (as opposed to naming it only as a child).
func (inv *Inventory) HasSection(g string) bool { return inv.sections[g] }
