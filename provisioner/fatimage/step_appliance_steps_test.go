package fatimage

import (
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
)

// TestRunningSteps: a hook runs when a step of it runs for the build
// host; steps that do not run are dropped.
func TestRunningSteps(t *testing.T) {
	steps := []appliance.Step{
		{Kind: "hook", Hook: "pre", Name: "/env/hooks/pre.yml"},
		{Kind: "module", Hook: "pre", Hosts: "control:!builder", Name: "ansible.builtin.copy"},
		{Kind: "role", Hosts: "builder", Name: "a", When: []string{"'a' in group_names"}},
		{Kind: "role", Hosts: "builder", Name: "b", When: []string{"'b' in group_names"}},
		{Kind: "hook", Hook: "post", Name: "/env/hooks/post.yml"},
		{Kind: "role", Hook: "post", Hosts: "builder", Name: "c"},
		{Kind: "hook", Hook: "post-filesystems", Absent: true},
	}
	res := &appliance.Result{
		Patterns:   map[string]bool{"control:!builder": false, "builder": true},
		Conditions: map[string]appliance.Truth{"'a' in group_names": {Holds: true}, "'b' in group_names": {}},
	}
	got, err := runningSteps(res, applianceSteps(steps, func(string) bool { return false }))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range got {
		names = append(names, st.Kind+" "+st.Name+st.Hook)
	}
	if want := "role a, hook /env/hooks/post.ymlpost, role cpost"; strings.Join(names, ", ") != want {
		t.Errorf("running: %s, want %s", strings.Join(names, ", "), want)
	}
	if _, err := runningSteps(&appliance.Result{}, applianceSteps(steps[2:3], func(string) bool { return false })); err == nil {
		t.Error("a step the resolution did not ask for: no error")
	}
}

// TestNativeGroupsRun: a step fatimage.yml runs for the build host whose
// built-in group the host's groups leave out brings that group into the
// build (the rebuild role's install runs on every build host); a step
// that does not run, or whose group is in, brings none.
func TestNativeGroupsRun(t *testing.T) {
	rebuild := appliance.Step{Kind: "role", Hosts: "builder", Name: "rebuild", TasksFrom: "install.yml", File: "ansible/fatimage.yml"}
	openhpc := appliance.Step{Kind: "role", Hosts: "builder", Name: "stackhpc.openhpc", File: "ansible/fatimage.yml", When: []string{"'openhpc' in group_names"}}
	res := &appliance.Result{
		Patterns:   map[string]bool{"builder": true},
		Conditions: map[string]appliance.Truth{"'openhpc' in group_names": {}},
	}
	got, err := nativeGroupsRun([]appliance.Step{rebuild, openhpc}, nil, resultRuns(res))
	if err != nil || strings.Join(got, ",") != "rebuild" {
		t.Errorf("groups %v (%v), want rebuild", got, err)
	}
	if got, err := nativeGroupsRun([]appliance.Step{rebuild}, []string{"slurm_stats"}, resultRuns(res)); err != nil || len(got) != 0 {
		t.Errorf("with slurm_stats installed: %v (%v), want none", got, err)
	}
}
