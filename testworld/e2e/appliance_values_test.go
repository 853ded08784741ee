package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
)

// fromAppliance is an entry of image.json's appliance.from_appliance.
type fromAppliance struct {
	Variable, Task string
	Values         []string
}

// TestApplianceValuesBuild builds with packer from the site's appliance:
// testworld/appliancesite's overrides environment on top of the
// appliance's .stackhpc, the site's Ansible reaching the build VM with
// what Packer gives the provisioner, and a checkout whose desktop task
// pins a newer turbovnc (a value no variable holds) with the site's
// screensaver kept. The booted image carries each of the site's
// overrides, and its image.json says they came from the appliance.
func TestApplianceValuesBuild(t *testing.T) {
	labtest.Require(t)
	site := appliancesite.New(t, appliancesite.Overrides)
	appliancesite.EditFile(t, site, "ansible/roles/openondemand/tasks/vnc_compute.yml", func(s string) string {
		return strings.Replace(s, "- turbovnc-3.0.1", "- turbovnc-3.1.4", 1)
	})
	if err := os.WriteFile(filepath.Join(site.Environment, "inventory", "group_vars", "all", "zz-desktop.yml"), []byte("openondemand_desktop_screensaver: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// the names of node_exporter's user and group, and its config directory
	nodeExporter := "node_exporter_system_user: prom-node\nnode_exporter_system_group: monitoring\nnode_exporter_config_dir: /etc/prometheus/node\n"
	if err := os.WriteFile(filepath.Join(site.Environment, "inventory", "group_vars", "all", "zz-node-exporter.yml"), []byte(nodeExporter), 0o644); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("e2e-appliance-values-%d", time.Now().Unix())
	vars := applianceVars(t, t.TempDir(), site, theLab.SnapshotRepos(repos.NewerTimestamp))
	r := build(t, []string{"fat-common.pkr.hcl", "fat-appliance.pkr.hcl"},
		append(labBinaryVars(), "-var", "image_name="+name, "-var-file", vars,
			"-var", "inventory_groups=extra_packages,openhpc,openondemand,grafana,kernel_modules,openondemand_desktop,node_exporter")...)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	out := r.Output()
	if strings.Contains(out, theLab.ArkPassword) {
		t.Fatal("the Ark password appeared in packer's output")
	}
	if !strings.Contains(out, "environment overrides:") || !strings.Contains(out, "resolved on the build VM in") {
		t.Errorf("the build does not say what it read:\n%s", out)
	}
	img := findImage(t, name)
	labtest.RequireClean(t, theLab)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, stop := labtest.BootDial(ctx, t, theLab, "appliance-values-boot", img.ID)
	defer stop()
	want := "fatimage-site-extra-1.0\nslurm-sview-ohpc-23.11.10\nondemand-4.1.5\ngrafana-10.4.19\nmod_auth_openidc-2.4.10\nondemand-dex-2.36.0"
	if got := c.Run(t, "rpm -q --qf '%{NAME}-%{VERSION}\\n' fatimage-site-extra slurm-sview-ohpc ondemand grafana mod_auth_openidc ondemand-dex"); got != want {
		t.Errorf("the site's packages:\n%s\nwant\n%s", got, want)
	}
	if got := c.Run(t, "getent passwd sitebot | cut -d: -f3; grep -c esp4 /etc/modprobe.d/appliance.conf; grep -o 'sctp\\|dccp' /etc/modprobe.d/appliance.conf | sort | tr '\\n' ' '"); got != "1234\n0\ndccp sctp" {
		t.Errorf("sitebot's uid; the denylist without the default esp4, with the site's sctp and dccp:\n%s", got)
	}
	if got := c.Run(t, "rpm -q --qf '%{NAME}-%{VERSION}\\n' turbovnc xfce4-screensaver"); got != "turbovnc-3.1.4\nxfce4-screensaver-4.18.4" {
		t.Errorf("the checkout's turbovnc pin, the site's screensaver kept:\n%s", got)
	}
	nodeExp := "getent passwd prom-node | cut -d: -f3,4,6; getent group monitoring | cut -d: -f3; getent passwd node-exp || echo no node-exp; " +
		"stat -c %U:%G /etc/prometheus/node /var/lib/node_exporter; grep -E '^(User|Group)=' /etc/systemd/system/node_exporter.service"
	if got, want := c.Run(t, nodeExp), "975:975:/etc/prometheus/node\n975\nno node-exp\nprom-node:monitoring\nprom-node:monitoring\nUser=prom-node\nGroup=monitoring"; got != want {
		t.Errorf("node_exporter's user, group and config directory as the site names them:\n%s\nwant\n%s", got, want)
	}
	if got := c.Run(t, labtest.GrepAsRoot("-c '^enabled = 0' /etc/yum.repos.d/site-extra.repo")); got != "1" {
		t.Errorf("dnf_repos_extra's repository, disabled in the image: %q", got)
	}
	var info struct {
		Appliance struct {
			Values, Environment string
			FromAppliance       []fromAppliance `json:"from_appliance"`
		} `json:"appliance"`
	}
	if err := json.Unmarshal([]byte(c.Run(t, "cat /var/lib/image/image.json")), &info); err != nil {
		t.Fatal(err)
	}
	if info.Appliance.Values != "site" || filepath.Base(info.Appliance.Environment) != appliancesite.Overrides || len(info.Appliance.FromAppliance) < 8 {
		t.Errorf("image.json appliance: %+v", info.Appliance)
	}
	if !slices.ContainsFunc(info.Appliance.FromAppliance, func(v fromAppliance) bool {
		return v.Task == "vnc_compute.yml" && len(v.Values) > 0 && v.Values[0] == "turbovnc-3.1.4"
	}) {
		t.Errorf("image.json does not say the desktop's packages came from vnc_compute.yml: %+v", info.Appliance.FromAppliance)
	}
}
