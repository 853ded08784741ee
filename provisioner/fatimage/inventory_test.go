package fatimage

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// applianceLayout is the checked-in appliance inventory layout.
// applianceDir is the checked-in stand-in of an appliance checkout.
const applianceDir = "../../testworld/appliance"

var applianceLayout = []string{
	"../../testworld/appliance/environments/common/inventory",
	"../../testworld/appliance/environments/site/inventory",
	"../../testworld/appliance/environments/fatsite/inventory",
}

func TestInventoryFatBuild(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	if err := p.Prepare(map[string]any{"inventory": applianceLayout, "inventory_groups": "fatimage", "appliance_dir": applianceDir}); err != nil {
		t.Fatal(err)
	}
	c := p.plan
	// the host's groups, as Ansible resolves them
	for _, g := range []string{"builder", "fatimage", "grafana", "filebeat", "site_monitoring"} {
		if !slices.Contains(c.hostGroups, g) {
			t.Errorf("host not in %s: %v", g, c.hostGroups)
		}
	}
	// their built-in sets: builder → always, the feature groups by name;
	// fatimage itself is not expanded (the inventory says what it holds)
	for _, g := range []string{"always", "openondemand_desktop", "grafana", "openhpc", "dnf_repos", "podman", "ansible_init", "hpctests", "node_exporter", "mysql"} {
		if !slices.Contains(c.setNames, g) {
			t.Errorf("set %s not installed: %v", g, c.setNames)
		}
	}
	if slices.Contains(c.setNames, "fatimage") {
		t.Errorf("fatimage expanded: %v", c.setNames)
	}
	if !slices.Contains(c.sets.Packages, "grafana-10.4.18") || !slices.Contains(c.sets.Packages, "@Xfce") {
		t.Errorf("packages %v", c.sets.Packages)
	}
}

func TestInventoryExtraBuild(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	vendor := []map[string]string{
		{"name": "doca", "repo_file": "doca", "repo_name": "doca", "baseurl": "https://doca.example/rhel9/x86_64/", "gpgcheck": "false"},
		{"name": "cuda", "repo_file": "cuda-rhel9", "repo_name": "cuda", "baseurl": "https://cuda.example/rhel9/x86_64/", "gpgcheck": "false"},
	}
	if err := p.Prepare(map[string]any{"inventory": applianceLayout, "inventory_groups": "doca,cuda", "repos": vendor}); err != nil {
		t.Fatal(err)
	}
	// builder's own work, its children kernel_modules and dnf_repos, and
	// the vendor groups; nothing of the fat build
	if got := strings.Join(p.plan.setNames, ","); got != "always,cuda,dnf_repos,doca,kernel_modules" {
		t.Errorf("extra build sets %s", got)
	}
	if slices.Contains(p.plan.sets.Packages, "grafana-10.4.18") {
		t.Error("extra build installs grafana")
	}
}

func TestInventoryGroupsAdd(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	// groups add to what the inventory gives; unknown names without
	// built-in content (site_only) pass silently
	if err := p.Prepare(map[string]any{"groups": []string{"nfs"}, "inventory_groups": "site_only"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.plan.setNames, ","); got != "nfs,always" {
		t.Errorf("sets %s", got)
	}
	if got := strings.Join(p.plan.hostGroups, ","); got != "all,builder,site_only" {
		t.Errorf("host groups %s", got)
	}
}

func TestInventoryTypos(t *testing.T) {
	clearArkEnv(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "groups")
	if err := os.WriteFile(bad, []byte("[grafana:children]\ncontrl\n[ok:children]\nsshd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	loop := filepath.Join(dir, "loop")
	if err := os.WriteFile(loop, []byte("[a:children]\nb\n[b:children]\na\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		raw  map[string]any
		want string
	}{
		{"inventory_groups typo", map[string]any{"inventory_groups": "fatimge"},
			`inventory_groups: unknown group "fatimge": did you mean "fatimage"?`},
		{"child typo", map[string]any{"inventory": []string{bad}},
			`inventory: unknown group "contrl": did you mean "control"?`},
		{"groups typo", map[string]any{"groups": []string{"grafanna"}},
			`groups[0]: unknown group "grafanna": did you mean "grafana"?`},
		{"loop", map[string]any{"inventory": []string{loop}}, "inventory[0]: groups form a loop: a -> b -> a"},
		{"missing", map[string]any{"inventory": []string{filepath.Join(dir, "nope")}}, "inventory[0]: stat "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p Provisioner
			err := p.Prepare(tc.raw)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			// sshd is an appliance group: never a typo of sssd
			if strings.Contains(err.Error(), "sshd") {
				t.Errorf("sshd flagged: %v", err)
			}
		})
	}
}

// Names with no build-time content pass silently wherever they appear:
// a child no file gives a section (Ansible makes it an empty group), an
// appliance runtime group close to a built-in's name (nhc, sshd), and a
// site's own name given for the build; only a near miss of a built-in
// group that is not an appliance group is a typo.
func TestInventoryRuntimeOnlyNamesSilent(t *testing.T) {
	clearArkEnv(t)
	dir := t.TempDir()
	groups := filepath.Join(dir, "groups")
	text := "[site_monitoring_extra:children]\nbuilder\n[nhc:children]\nbuilder\n[login:children]\nsshd\nzenith\nmy_runtime_child\n"
	if err := os.WriteFile(groups, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var p Provisioner
	if err := p.Prepare(map[string]any{"inventory": []string{groups}, "inventory_groups": "my_cluster_role,login"}); err != nil {
		t.Fatalf("runtime-only names refused: %v", err)
	}
	for _, g := range []string{"site_monitoring_extra", "nhc", "my_cluster_role", "login"} {
		if !slices.Contains(p.plan.hostGroups, g) {
			t.Errorf("host not in %s: %v", g, p.plan.hostGroups)
		}
	}
	// sshd, zenith and my_runtime_child are children of login, which the
	// host is in; the host is not in them (membership flows up only)
	if slices.Contains(p.plan.hostGroups, "sshd") || slices.Contains(p.plan.hostGroups, "my_runtime_child") {
		t.Errorf("host in a child of its group: %v", p.plan.hostGroups)
	}
	// the same layout with a near miss of a built-in group is refused
	if err := os.WriteFile(groups, []byte(text+"[control:children]\npodmna\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var q Provisioner
	if err := q.Prepare(map[string]any{"inventory": []string{groups}}); err == nil || !strings.Contains(err.Error(), `inventory: unknown group "podmna": did you mean "podman"?`) {
		t.Errorf("typo: %v", err)
	}
}
