// Package timestamps reads and rewrites the Slurm appliance's
// dnf_repo_timestamps.yml, keeping everything it does not change (other
// keys, comments, order) so a pipeline can write its pins back.
package timestamps

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// RootKey is the top-level mapping that holds the repositories.
const RootKey = "dnf_repos_default"

// Entry is one repository at one OS version key.
type Entry struct {
	Repo    string // key under dnf_repos_default, e.g. "baseos"
	Version string // OS version key, e.g. "9.6" or "9"

	PulpPath      string
	PulpTimestamp string
	RepoFile      string
	RepoName      string // empty: same as Repo
	GPGCheck      *bool  // nil: true
	ContentURL    string // pulp_content_url; empty: the default
}

// Key identifies an entry.
func (e Entry) Key() string { return e.Repo + "@" + e.Version }

// File is a parsed timestamps file.
type File struct {
	doc     yaml.Node
	repos   *yaml.Node // the dnf_repos_default mapping
	entries []Entry
	nodes   map[string]*yaml.Node // entry key -> its mapping node
}

// New returns an empty file, for writing entries that came from elsewhere.
func New() *File {
	f := &File{nodes: map[string]*yaml.Node{}}
	f.repos = &yaml.Node{Kind: yaml.MappingNode}
	root := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar(RootKey), f.repos}}
	f.doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}
	return f
}

// Parse reads a timestamps file. Errors name the repository and version.
func Parse(data []byte) (*File, error) {
	f := &File{nodes: map[string]*yaml.Node{}}
	if err := yaml.Unmarshal(data, &f.doc); err != nil {
		return nil, fmt.Errorf("not valid YAML: %v", err)
	}
	if f.doc.Kind != yaml.DocumentNode || len(f.doc.Content) == 0 || f.doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("expected a mapping with a %q key", RootKey)
	}
	f.repos = lookup(f.doc.Content[0], RootKey)
	if f.repos == nil {
		return nil, fmt.Errorf("no %q key", RootKey)
	}
	if f.repos.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: %s must be a mapping of repositories", f.repos.Line, RootKey)
	}
	for i := 0; i+1 < len(f.repos.Content); i += 2 {
		repo, versions := f.repos.Content[i].Value, f.repos.Content[i+1]
		if versions.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("line %d: repo %q must map OS versions to entries", versions.Line, repo)
		}
		for j := 0; j+1 < len(versions.Content); j += 2 {
			version, node := versions.Content[j].Value, versions.Content[j+1]
			e, err := decodeEntry(repo, version, node)
			if err != nil {
				return nil, err
			}
			f.entries = append(f.entries, e)
			f.nodes[e.Key()] = node
		}
	}
	return f, nil
}

func decodeEntry(repo, version string, node *yaml.Node) (Entry, error) {
	e := Entry{Repo: repo, Version: version}
	where := fmt.Sprintf("line %d: repo %q (%s)", node.Line, repo, version)
	if node.Kind != yaml.MappingNode {
		return e, fmt.Errorf("%s: must be a mapping with pulp_path, pulp_timestamp and repo_file", where)
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, val := node.Content[i].Value, node.Content[i+1]
		if val.Kind != yaml.ScalarNode {
			return e, fmt.Errorf("%s: %s must be a single value", where, key)
		}
		switch key {
		case "pulp_path":
			e.PulpPath = val.Value
		case "pulp_timestamp":
			e.PulpTimestamp = val.Value
		case "repo_file":
			e.RepoFile = val.Value
		case "repo_name":
			e.RepoName = val.Value
		case "pulp_content_url":
			e.ContentURL = val.Value
		case "gpgcheck":
			b, err := parseBool(val.Value)
			if err != nil {
				return e, fmt.Errorf("%s: gpgcheck: %v", where, err)
			}
			e.GPGCheck = &b
		}
	}
	if e.PulpPath == "" {
		return e, fmt.Errorf("%s: pulp_path is missing", where)
	}
	if e.RepoFile == "" {
		return e, fmt.Errorf("%s: repo_file is missing", where)
	}
	return e, nil
}

// parseBool takes YAML 1.1 and 1.2 spellings, as Ansible does.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "yes", "on", "y":
		return true, nil
	case "no", "off", "n":
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%q is not a boolean", s)
	}
	return b, nil
}

// Entries returns every entry in file order.
func (f *File) Entries() []Entry { return append([]Entry(nil), f.entries...) }

// Lookup finds a repository's entry for an OS version: the exact version
// key first ("9.6"), then its major version ("9"), as the appliance does.
func (f *File) Lookup(repo, osVersion string) (Entry, bool) {
	for _, v := range VersionKeys(osVersion) {
		for _, e := range f.entries {
			if e.Repo == repo && e.Version == v {
				return e, true
			}
		}
	}
	return Entry{}, false
}

// VersionKeys are the keys tried for an OS version, most specific first.
func VersionKeys(osVersion string) []string {
	major, _, found := strings.Cut(osVersion, ".")
	if !found {
		return []string{osVersion}
	}
	return []string{osVersion, major}
}

// Repos lists the repository names in file order.
func (f *File) Repos() []string {
	var names []string
	for i := 0; i < len(f.repos.Content); i += 2 {
		names = append(names, f.repos.Content[i].Value)
	}
	return names
}

// Put writes an entry back: fields of an existing entry are updated in
// place (unknown keys and comments stay), a new entry is appended.
func (f *File) Put(e Entry) {
	node, ok := f.nodes[e.Key()]
	if !ok {
		versions := lookup(f.repos, e.Repo)
		if versions == nil {
			versions = &yaml.Node{Kind: yaml.MappingNode}
			f.repos.Content = append(f.repos.Content, scalar(e.Repo), versions)
		}
		node = &yaml.Node{Kind: yaml.MappingNode}
		versions.Content = append(versions.Content, quoted(e.Version), node)
		f.nodes[e.Key()] = node
		f.entries = append(f.entries, e)
	} else {
		for i := range f.entries {
			if f.entries[i].Key() == e.Key() {
				f.entries[i] = e
			}
		}
	}
	set(node, "pulp_path", e.PulpPath)
	set(node, "pulp_timestamp", e.PulpTimestamp)
	set(node, "repo_file", e.RepoFile)
	set(node, "repo_name", e.RepoName)
	set(node, "pulp_content_url", e.ContentURL)
	if e.GPGCheck != nil {
		set(node, "gpgcheck", strconv.FormatBool(*e.GPGCheck))
		if v := lookup(node, "gpgcheck"); v != nil {
			v.Tag = "!!bool"
		}
	}
}

// Marshal renders the file in the appliance's layout.
func (f *File) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&f.doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func lookup(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// set updates a key's value or adds it when missing; an empty value
// changes nothing, so keys the entry does not use are not invented.
func set(m *yaml.Node, key, value string) {
	if value == "" {
		return
	}
	if v := lookup(m, key); v != nil {
		v.Value = value
		return
	}
	m.Content = append(m.Content, scalar(key), scalar(value))
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }

// quoted keeps version keys such as '9.6' strings when the file is read back.
func quoted(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Style: yaml.SingleQuotedStyle}
}
