package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
)

// TestApplianceValuesBuild builds with packer from the site's appliance:
// testworld/appliancesite's overrides environment on top of the
// appliance's .stackhpc, the site's Ansible reaching the build VM with
// what Packer gives the provisioner. The booted image carries each of the
// site's overrides, and its image.json says they came from the appliance.
func TestApplianceValuesBuild(t *testing.T) {
	labtest.Require(t)
	site := appliancesite.New(t, appliancesite.Overrides)
	name := fmt.Sprintf("e2e-appliance-values-%d", time.Now().Unix())
	vars := applianceVars(t, t.TempDir(), site, theLab.SnapshotRepos(repos.NewerTimestamp))
	r := build(t, []string{"fat-common.pkr.hcl", "fat-appliance.pkr.hcl"},
		append(labBinaryVars(), "-var", "image_name="+name, "-var-file", vars)...)
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
	if got := c.Run(t, labtest.GrepAsRoot("-c '^enabled = 0' /etc/yum.repos.d/site-extra.repo")); got != "1" {
		t.Errorf("dnf_repos_extra's repository, disabled in the image: %q", got)
	}
	var info struct {
		Appliance struct {
			Values, Environment string
			FromAppliance       []struct{ Variable string } `json:"from_appliance"`
		} `json:"appliance"`
	}
	if err := json.Unmarshal([]byte(c.Run(t, "cat /var/lib/image/image.json")), &info); err != nil {
		t.Fatal(err)
	}
	if info.Appliance.Values != "site" || filepath.Base(info.Appliance.Environment) != appliancesite.Overrides || len(info.Appliance.FromAppliance) < 8 {
		t.Errorf("image.json appliance: %+v", info.Appliance)
	}
}
