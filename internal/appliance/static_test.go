package appliance_test

import (
	"slices"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

// TestStaticRuns: host patterns and group conditions decided from the
// host's groups as Ansible decides them under --limit builder; anything
// else is left to Ansible.
func TestStaticRuns(t *testing.T) {
	groups := []string{"all", "builder", "openhpc", "cluster"}
	for _, c := range []struct {
		hosts      string
		when       []string
		runs, sure bool
	}{
		{"builder", nil, true, true},
		{"all", nil, true, true},
		{"control", nil, false, true},
		{"control:!builder", nil, false, true},
		{"openhpc:!builder", nil, false, true},
		{"cluster:&openhpc", nil, true, true},
		{"cluster:&control", nil, false, true},
		{"control,openhpc", nil, true, true},
		{"localhost", nil, false, true},
		{"k3s:&builder", nil, false, true},
		{"builder", []string{"'openhpc' in group_names"}, true, true},
		{"builder", []string{"'mysql' in group_names"}, false, true},
		{"builder", []string{"'mysql' in group_names or 'openhpc' in group_names"}, true, true},
		{"builder", []string{"appliances_mode == 'build'"}, true, false},
		{"builder", []string{"appliances_mode == 'build'", "'mysql' in group_names"}, false, true},
		{"open*", nil, true, false},
	} {
		runs, sure := appliance.StaticRuns(appliance.Step{Kind: "role", Hosts: c.hosts, When: c.when}, groups)
		if runs != c.runs || sure != c.sure {
			t.Errorf("%s %q: runs %v sure %v, want %v %v", c.hosts, c.when, runs, sure, c.runs, c.sure)
		}
	}
	if runs, sure := appliance.StaticRuns(appliance.Step{Kind: "hook", Absent: true}, groups); runs || !sure {
		t.Error("an absent hook runs")
	}
}

// TestStaticGroups: the environment's inventory files (common, site,
// .stackhpc, the site's) put a fat build host in the groups Ansible
// gives it.
func TestStaticGroups(t *testing.T) {
	got, err := appliancesite.New(t, appliancesite.Overrides, "fatimage").StaticGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"builder", "fatimage", "openhpc", "cluster", "dnf_repos", "etc_hosts"} {
		if !slices.Contains(got, g) {
			t.Errorf("groups %v lack %s", got, g)
		}
	}
	if slices.Contains(got, "doca") || slices.Contains(got, "cuda") {
		t.Errorf("groups %v: an extra build's group", got)
	}
}

// TestStepKeys: the names native.yaml matches steps by.
func TestStepKeys(t *testing.T) {
	for _, c := range []struct {
		st   appliance.Step
		want []string
	}{
		{appliance.Step{Kind: "role", Name: "openondemand", TasksFrom: "vnc_compute.yml"}, []string{"role openondemand vnc_compute.yml", "role openondemand"}},
		{appliance.Step{Kind: "module", File: "ansible/fatimage.yml", Name: "ansible.builtin.dnf", TaskName: "Install nfs packages"}, []string{"task ansible/fatimage.yml: Install nfs packages"}},
		{appliance.Step{Kind: "module", File: "ansible/bootstrap.yml", Name: "ansible.builtin.fail", Hosts: "localhost"}, []string{"task ansible/bootstrap.yml: ansible.builtin.fail on localhost"}},
		{appliance.Step{Kind: "hook", Hook: "post"}, []string{"hook post"}},
	} {
		if got := c.st.Keys(); !slices.Equal(got, c.want) {
			t.Errorf("%+v: keys %q, want %q", c.st, got, c.want)
		}
	}
}
