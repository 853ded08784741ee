package appliance_test

import (
	"slices"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

func steps(t *testing.T, s *appliance.Site) []appliance.Step {
	t.Helper()
	st, err := s.Steps()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// index is the position of the first step matching, or -1.
func index(steps []appliance.Step, match func(appliance.Step) bool) int {
	return slices.IndexFunc(steps, match)
}

func TestStepsOfTheCheckout(t *testing.T) {
	st := steps(t, appliancesite.New(t, ".stackhpc"))
	ohpc := index(st, func(s appliance.Step) bool { return s.Name == "stackhpc.openhpc" })
	if ohpc < 0 {
		t.Fatal("no stackhpc.openhpc step")
	}
	if s := st[ohpc]; s.Kind != "role" || s.TasksFrom != "install-ohpc.yml" || s.Hosts != "builder" ||
		!slices.Equal(s.When, []string{"'openhpc' in group_names"}) || s.File != "ansible/fatimage.yml" {
		t.Errorf("openhpc step %+v", s)
	}
	hook := func(name string) int {
		return index(st, func(s appliance.Step) bool { return s.Kind == "hook" && s.Hook == name })
	}
	validate := index(st, func(s appliance.Step) bool { return s.File == "ansible/validate-galaxy.yml" })
	bootstrap := index(st, func(s appliance.Step) bool { return s.File == "ansible/bootstrap.yml" })
	doca := index(st, func(s appliance.Step) bool { return s.Name == "doca" })
	final := index(st, func(s appliance.Step) bool { return s.File == "ansible/final.yml" })
	// fatimage.yml's order: pre hook, imports, bootstrap, doca, post-bootstrap hook, ..., post hook, final.yml
	order := []int{hook("pre"), validate, bootstrap, doca, hook("post-bootstrap"), ohpc, hook("post"), final}
	if slices.Contains(order, -1) || !slices.IsSorted(order) {
		t.Errorf("steps out of fatimage.yml's order: %v", order)
	}
	for name, absent := range map[string]bool{"pre": false, "post-bootstrap": false, "post-filesystems": true, "post": true} {
		if i := hook(name); i < 0 || st[i].Absent != absent {
			t.Errorf(".stackhpc hook %s: absent %v expected", name, absent)
		}
	}
	am := index(st, func(s appliance.Step) bool { return s.Name == "prometheus.prometheus.alertmanager" })
	if am < 0 || st[am].Vars["alertmanager_skip_configure"] != true {
		t.Errorf("alertmanager step's vars: %+v", st[am])
	}
	// .stackhpc's pre hook's play follows its hook entry
	if i := hook("pre"); st[i+1].Hook != "pre" || st[i+1].Hosts != "control:!builder" {
		t.Errorf("after the pre hook: %+v", st[i+1])
	}
}

// TestStepsNewRole: a role fatimage.yml gains is listed where it was
// added.
func TestStepsNewRole(t *testing.T) {
	s := appliancesite.New(t, appliancesite.Overrides)
	appliancesite.AddToFatimage(t, s, "- hosts: builder\n  become: true\n  tasks:\n    - ansible.builtin.include_role:\n        name: site_newthing\n      when: \"'login' in group_names\"\n")
	st := steps(t, s)
	last := st[len(st)-1]
	if last.Name != "site_newthing" || last.Kind != "role" || last.Hosts != "builder" || last.When[0] != "'login' in group_names" {
		t.Errorf("last step %+v, want the added role", last)
	}
}
