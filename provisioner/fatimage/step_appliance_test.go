package fatimage

import (
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
)

func TestApplianceTarget(t *testing.T) {
	for _, port := range []any{2222, int64(2222), float64(2222), "2222"} {
		tg, err := applianceTarget(map[string]any{"Host": "10.0.0.5", "Port": port, "User": "rocky", "SSHPrivateKey": "KEY", "ConnType": "ssh"})
		if err != nil || tg.Host != "10.0.0.5" || tg.Port != 2222 || tg.User != "rocky" || string(tg.PrivateKey) != "KEY" {
			t.Errorf("port %T: %+v, %v", port, tg, err)
		}
	}
	if _, err := applianceTarget(map[string]any{"Host": "h", "Port": 22, "User": "u"}); err == nil || !strings.Contains(err.Error(), "no SSH host, user and private key") {
		t.Errorf("no key: %v", err)
	}
	if _, err := applianceTarget(map[string]any{"ConnType": "winrm"}); err == nil || !strings.Contains(err.Error(), "winrm") {
		t.Errorf("winrm: %v", err)
	}
	if _, err := applianceTarget(nil); err == nil {
		t.Error("no generated data: no error")
	}
}

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
