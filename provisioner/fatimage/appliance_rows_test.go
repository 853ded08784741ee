package fatimage

import (
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

// stepIndex is the position of the provisioner step name in the table.
func stepIndex(t *testing.T, name string) int {
	t.Helper()
	i := slices.IndexFunc(steps, func(s step) bool { return s.name == name })
	if i < 0 {
		t.Fatalf("no step %q", name)
	}
	return i
}

// TestApplianceProxyRows pins what docs/appliance-contract.md ("Build-time
// proxy") says a build does for a host in `proxy`: the role is not native
// and runs through the site's Ansible, set in the bootstrap phase (after
// the plugin's own repos and packages steps) and removed by final.yml's
// play, gated on proxy_remove, in the install phase before cleanup.
func TestApplianceProxyRows(t *testing.T) {
	s := appliancesite.New(t, ".stackhpc", "fatimage")
	all, err := s.Steps()
	if err != nil {
		t.Fatal(err)
	}
	var got []applianceStep
	for _, a := range applianceSteps(all, func(string) bool { return true }) {
		if a.Kind == "role" && a.Name == "proxy" {
			got = append(got, a)
		}
	}
	if len(got) != 2 {
		t.Fatalf("proxy role steps: %d, want 2 (bootstrap.yml, final.yml)", len(got))
	}
	set, unset := got[0], got[1]
	for _, a := range got {
		if a.native != "" || a.why != "the plugin does not implement it" {
			t.Errorf("%s: native %q why %q, want through Ansible", a.Label(), a.native, a.why)
		}
	}
	if set.File != "ansible/bootstrap.yml" || set.phase != phaseBootstrap {
		t.Errorf("setting the proxy: %s in phase %s", set.File, set.phase)
	}
	if unset.File != "ansible/final.yml" || unset.phase != phaseInstall || unset.Vars["proxy_state"] != "absent" ||
		!slices.ContainsFunc(unset.When, func(w string) bool { return strings.Contains(w, "proxy_remove") }) {
		t.Errorf("removing the proxy: %s in phase %s, vars %v, when %v", unset.File, unset.phase, unset.Vars, unset.When)
	}
	boot, install := stepIndex(t, "ansible-bootstrap"), stepIndex(t, "ansible-install")
	for _, before := range []string{"repos", "packages", "reboot"} {
		if stepIndex(t, before) > boot {
			t.Errorf("step %s runs after the proxy is set: the docs say before", before)
		}
	}
	for _, after := range []string{"services", "binaries", "content", "containers"} {
		if i := stepIndex(t, after); i < boot || i > install {
			t.Errorf("step %s is not between setting and removing the proxy", after)
		}
	}
	if stepIndex(t, "cleanup") < install {
		t.Error("cleanup runs before the proxy is removed")
	}
	// the plugin's own work uses the proxy from the start when
	// bootstrap.yml's play runs for the host, not for final.yml's
	res := &appliance.Result{Patterns: map[string]bool{set.Hosts: true}, Conditions: map[string]appliance.Truth{},
		Values: map[string]map[string]appliance.Value{proxyScope: {"proxy_http_proxy": {Defined: true, Value: "http://squid.site:3128"}}}}
	for _, c := range unset.When {
		res.Conditions[c] = appliance.Truth{Holds: true}
	}
	if p, err := proxySettings(res).forBuild(res, all); err != nil || p == nil || p.http != "http://squid.site:3128" {
		t.Errorf("a host in proxy: %v %v", p, err)
	}
	res.Patterns[set.Hosts] = false
	if p, err := proxySettings(res).forBuild(res, all); err != nil || p != nil {
		t.Errorf("a host not in proxy: %v %v", p, err)
	}
}

// TestApplianceDeliberateRows pins the rows docs/appliance-contract.md
// keeps as deliberate differences: the appliance's ansible-init role (the
// azimuth_cloud.image_utils collection) and k3s's install are done by
// built-in groups whenever the build installs them, and run through the
// site's Ansible only when it does not.
func TestApplianceDeliberateRows(t *testing.T) {
	s := appliancesite.New(t, ".stackhpc", "fatimage")
	all, err := s.Steps()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ role, tasksFrom, group string }{
		{"azimuth_cloud.image_utils.linux_ansible_init", "", "ansible_init"},
		{"k3s", "install.yml", "k3s"},
	} {
		i := slices.IndexFunc(all, func(st appliance.Step) bool {
			return st.Kind == "role" && st.Name == c.role && st.TasksFrom == c.tasksFrom
		})
		if i < 0 {
			t.Fatalf("fatimage.yml has no step for role %s %s", c.role, c.tasksFrom)
		}
		on := applianceSteps(all, func(g string) bool { return g == c.group })[i]
		if on.native != "group "+c.group || on.phase != phaseBootstrap {
			t.Errorf("%s with group %s: native %q phase %s", c.role, c.group, on.native, on.phase)
		}
		off := applianceSteps(all, func(string) bool { return false })[i]
		if off.native != "" || !strings.Contains(off.why, "group "+c.group+", which this build does not install") {
			t.Errorf("%s without group %s: native %q why %q", c.role, c.group, off.native, off.why)
		}
	}
}
