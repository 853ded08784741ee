package packagesets

import (
	"fmt"
	"slices"
	"strings"
)

// DataMajor is the Rocky major the groups' own values are for: the
// appliance builds RL9 and RL8 from the same roles, and where a role
// chooses by ansible_distribution_major_version the group's values are
// RL9's, with the other major's in `per_major`.
const DataMajor = "9"

// MajorValue is a part of a group's set that differs on another Rocky
// major than DataMajor: on Major, Values replace Items of Into (a scalar
// at a content path is replaced whole), as an appliance source's values
// replace its items. Packages differ by the "el<N>:" prefix instead,
// filled in on the VM with the rest of the transaction.
type MajorValue struct {
	Major  string   `yaml:"major"`
	Into   string   `yaml:"into"`
	Items  []string `yaml:"items"`
	Values []string `yaml:"values"`
}

// ForMajor is g as built on Rocky major (DataMajor or "": g itself).
func ForMajor(g Group, major string) (Group, error) {
	if major == "" || major == DataMajor || !slices.ContainsFunc(g.PerMajor, func(m MajorValue) bool { return m.Major == major }) {
		return g, nil
	}
	out := g
	out.Packages = slices.Clone(g.Packages)
	if g.Content != nil {
		out.Content = deepCopy(g.Content).(map[string]any)
	}
	for _, m := range g.PerMajor {
		if m.Major != major {
			continue
		}
		if err := out.put(ApplianceVar{Into: m.Into, Items: m.Items}, m.Values); err != nil {
			return g, fmt.Errorf("group %q: per_major %s: %w", g.Name, m.Major, err)
		}
	}
	return out, nil
}

// checkPerMajor is what mustLoad holds a group's per-major values to:
// another major than the data's, and a place that exists.
func (g Group) checkPerMajor() error {
	for _, m := range g.PerMajor {
		if m.Major == "" || m.Major == DataMajor || len(m.Values) == 0 {
			return fmt.Errorf("per_major into %s: a major other than %s and values are needed", m.Into, DataMajor)
		}
		if _, err := ForMajor(g, m.Major); err != nil {
			return err
		}
	}
	return nil
}

// DataValues are what m replaces in g's own (RL9) data: Items, or the
// scalar or list at Into.
func (m MajorValue) DataValues(g Group) []string {
	if len(m.Items) > 0 || m.Into == "packages" {
		return m.Items
	}
	path, _ := strings.CutPrefix(m.Into, "content/")
	parent, key, err := walk(g.Content, strings.Split(path, "/"))
	if err != nil {
		return nil
	}
	v, _ := Strings(parent[key])
	return v
}
