package fatimage

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

// ansibleGroupNames is what the site's Ansible says of the build host's
// group_names with the checkout's common and site inventories and the
// host in builder and groups (the appliance's build inventory without an
// environment of its own).
func ansibleGroupNames(t *testing.T, checkout string, groups ...string) []string {
	t.Helper()
	hosts := filepath.Join(t.TempDir(), "build.ini")
	var ini strings.Builder
	for _, g := range append([]string{"builder"}, groups...) {
		ini.WriteString("[" + g + "]\n" + buildHost + "\n")
	}
	if err := os.WriteFile(hosts, []byte(ini.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{buildHost, "-c", "local", "-m", "debug", "-a", "var=group_names"}
	for _, inv := range checkoutInventories {
		args = append(args, "-i", filepath.Join(checkout, inv))
	}
	cmd := exec.Command("ansible", append(args, "-i", hosts)...)
	cmd.Dir = t.TempDir() // no ansible.cfg of the working directory
	cmd.Env = append(os.Environ(), "ANSIBLE_STDOUT_CALLBACK=json", "ANSIBLE_LOAD_CALLBACK_PLUGINS=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ansible: %v\n%s%s", err, out, stderr.String())
	}
	var res struct {
		Plays []struct {
			Tasks []struct {
				Hosts map[string]struct {
					GroupNames []string `json:"group_names"`
				} `json:"hosts"`
			} `json:"tasks"`
		} `json:"plays"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Plays) != 1 || len(res.Plays[0].Tasks) != 1 {
		t.Fatalf("ansible's answer: %v\n%s", err, out)
	}
	names := res.Plays[0].Tasks[0].Hosts[buildHost].GroupNames
	if len(names) == 0 {
		t.Fatalf("ansible gave no group_names:\n%s", out)
	}
	return names
}

// `groups` naming a node role, with the appliance checkout and no
// inventory, puts the build host in exactly the groups the site's Ansible
// does with the checkout's common and site inventories, and installs the
// same built-in sets as inventory mode with those inventories.
func TestRoleGroupsResolveAsAnsibleDoes(t *testing.T) {
	checkout := appliancesite.Checkout(t)
	clearArkEnv(t)
	for _, groups := range [][]string{{"control"}, {"login"}, {"compute"}, {"compute", "grafana"}} {
		t.Run(strings.Join(groups, ","), func(t *testing.T) {
			var p Provisioner
			if err := p.Prepare(map[string]any{"groups": groups, "appliance_dir": checkout}); err != nil {
				t.Fatal(err)
			}
			got := slices.DeleteFunc(slices.Clone(p.plan.hostGroups), func(g string) bool { return g == "all" || g == "ungrouped" })
			want := ansibleGroupNames(t, checkout, groups...)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("host groups\n got  %v\n want %v (ansible)", got, want)
			}
			var inv Provisioner
			if err := inv.Prepare(map[string]any{"inventory": []string{filepath.Join(checkout, checkoutInventories[0]), filepath.Join(checkout, checkoutInventories[1])},
				"inventory_groups": strings.Join(groups, ","), "appliance_dir": checkout}); err != nil {
				t.Fatal(err)
			}
			a, b := slices.Clone(p.plan.setNames), slices.Clone(inv.plan.setNames)
			slices.Sort(a)
			slices.Sort(b)
			if !slices.Equal(a, b) || slices.Contains(a, groups[0]) {
				t.Errorf("built-in sets\n groups    %v\n inventory %v", a, b)
			}
			// the appliance updates only hosts in its update group (a
			// fatimage build's), not one in a role alone
			if p.plan.update != inv.plan.update || p.plan.update != slices.Contains(want, "update") {
				t.Errorf("update %v, inventory mode %v, ansible's groups %v", p.plan.update, inv.plan.update, want)
			}
		})
	}
}

// Without a checkout or an inventory a node role is refused, naming the
// field and the ways to say what is meant; feature groups and fatimage
// stay as they are.
func TestRoleGroupsWithoutCheckoutRefused(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	err := p.Prepare(map[string]any{"groups": []string{"nfs", "login"}})
	if err == nil || !strings.Contains(err.Error(), `groups[1]: "login" alone is not the appliance's login image, which its inventories' [x:children] decide; set appliance_dir`) ||
		!strings.Contains(err.Error(), `inventory_groups = "login"`) {
		t.Fatalf("got %v", err)
	}
	for _, ok := range [][]string{{"fatimage"}, {"nfs", "grafana"}} {
		var p Provisioner
		if err := p.Prepare(map[string]any{"groups": ok}); err != nil {
			t.Errorf("groups %v: %v", ok, err)
		}
	}
}
