// Command groupsdoc writes the reference page of the fatimage
// provisioner's built-in groups (docs/provisioners/fatimage-groups.md)
// from package_sets.yaml as the plugin embeds it, so the page cannot
// drift from the data: `make generate` runs it (the go:generate line of
// package packagesets) and its test fails when the committed page is not
// what it makes. It is not linked into the plugin.
package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: groupsdoc <groups page.md> <appliance-contract.md>")
		os.Exit(2)
	}
	page, err := render(packagesets.Source())
	if err == nil {
		err = os.WriteFile(os.Args[1], page, 0o644) //nolint:gosec // a documentation page, world-readable like the tree
	}
	var d *data
	if err == nil {
		d, err = decode(packagesets.Source())
	}
	if err == nil {
		err = writeContract(os.Args[2], d)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "groupsdoc:", err)
		os.Exit(1)
	}
}

// data is package_sets.yaml decoded with the package's own types, plus
// what only the YAML text holds: key order and comments.
type data struct {
	Expands  map[string][]string           `yaml:"expands"`
	Groups   map[string]packagesets.Set    `yaml:"groups"`
	Users    map[string]packagesets.User   `yaml:"users"`
	Binaries map[string]packagesets.Binary `yaml:"binaries"`
	// LocalUsers: the appliance variable of the users bootstrap.yml makes.
	LocalUsers packagesets.LocalUsers `yaml:"local_users"`
	// PodmanUsers: the appliance variable of the users its podman role makes.
	PodmanUsers packagesets.LocalUsers         `yaml:"podman_users"`
	ExtraRepos  packagesets.ExtraRepos         `yaml:"extra_repos"`
	order       map[string][]string            // keys of each top-level mapping, in file order
	notes       map[string]map[string][]string // comments by top-level key, then entry ("": the section's own)
}

func decode(src []byte) (*data, error) {
	var d data
	if err := yaml.Unmarshal(src, &d); err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, err
	}
	if len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("package_sets.yaml is not a mapping")
	}
	d.order, d.notes = map[string][]string{}, map[string]map[string][]string{}
	top := root.Content[0].Content
	for i := 0; i+1 < len(top); i += 2 {
		section, m := top[i].Value, top[i+1]
		d.notes[section] = map[string][]string{"": comments(&yaml.Node{HeadComment: top[i].HeadComment})}
		for j := 0; j+1 < len(m.Content); j += 2 {
			name := m.Content[j].Value
			d.order[section] = append(d.order[section], name)
			d.notes[section][name] = entryNotes(m.Content[j], m.Content[j+1])
		}
	}
	return &d, nil
}

// comments are the comments on an entry and anywhere inside it, each
// block as one paragraph without its `#` marks; under the key "" of a
// section, the comment above the section itself.
func comments(nodes ...*yaml.Node) []string {
	var out []string
	for _, n := range nodes {
		for _, c := range []string{n.HeadComment, n.LineComment, n.FootComment} {
			if p := paragraph(c); p != "" {
				out = append(out, p)
			}
		}
		out = append(out, comments(n.Content...)...)
	}
	return out
}

// entryNotes are an entry's comments: those on it and on its first
// field as they are, those deeper prefixed with the key they annotate.
func entryNotes(key, val *yaml.Node) []string {
	out := comments(key)
	if val.Kind != yaml.MappingNode {
		return append(out, comments(val.Content...)...)
	}
	out = append(out, comments(&yaml.Node{HeadComment: val.HeadComment, LineComment: val.LineComment})...)
	for i := 0; i+1 < len(val.Content); i += 2 {
		k, v := val.Content[i], val.Content[i+1]
		if i == 0 {
			out = append(out, comments(k)...)
		} else {
			out = append(out, labelled(k.Value, comments(k))...)
		}
		out = append(out, nestedNotes(v)...)
	}
	return out
}

// nestedNotes are the comments inside a value, each prefixed with the
// nearest key above it.
func nestedNotes(n *yaml.Node) []string {
	var out []string
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 1 {
			continue
		}
		if n.Kind == yaml.MappingNode {
			out = append(out, labelled(c.Value, comments(c, n.Content[i+1]))...)
			continue
		}
		out = append(out, comments(c)...)
	}
	return out
}

func labelled(key string, notes []string) []string {
	for i, n := range notes {
		notes[i] = "`" + key + "`: " + n
	}
	return notes
}

// paragraph is a comment block as one line of Markdown: its text
// outside code spans escaped, so `<name>` or `DS_*` read as written.
func paragraph(c string) string {
	var words []string
	for _, line := range strings.Split(c, "\n") {
		words = append(words, strings.Fields(strings.TrimLeft(strings.TrimSpace(line), "#"))...)
	}
	parts := strings.Split(strings.Join(words, " "), "`")
	for i := 0; i < len(parts); i += 2 {
		parts[i] = markdownEscaper.Replace(parts[i])
	}
	return strings.Join(parts, "`")
}

var markdownEscaper = strings.NewReplacer("<", "&lt;", ">", "&gt;", "*", `\*`, "[", `\[`, "]", `\]`)

// expansionsOf are the expansions (fatimage, control, ...) that stand for
// group, in file order.
func (d *data) expansionsOf(group string) []string {
	var out []string
	for _, e := range d.order["expands"] {
		if slices.Contains(d.Expands[e], group) {
			out = append(out, e)
		}
	}
	return out
}

// usersOf and binariesOf are the groups using a built-in user or binary.
func (d *data) usersOf(user string) []string {
	return d.groupsWhere(func(s packagesets.Set) bool { return slices.Contains(s.Users, user) })
}

func (d *data) binariesOf(bin string) []string {
	return d.groupsWhere(func(s packagesets.Set) bool { return slices.Contains(s.Binaries, bin) })
}

func (d *data) groupsWhere(f func(packagesets.Set) bool) []string {
	var out []string
	for _, g := range d.groupNames() {
		if f(d.Groups[g]) {
			out = append(out, g)
		}
	}
	return out
}

// groupNames are the groups with a set of their own, sorted.
func (d *data) groupNames() []string {
	return slices.Sorted(maps.Keys(d.Groups))
}
