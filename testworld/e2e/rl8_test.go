package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
)

// TestFatBuildRocky8 builds from the lab's Rocky 8.10 base image with
// its el8 snapshots the built-in groups whose values differ by major
// (fat-rl8.pkr.hcl), and openhpc for a Slurm to rebuild, and checks the
// booted image from outside: RL8's packages at el8 EVRs (python39
// beside RL8's own python3, 3.6), every venv made with python3.9 as the
// appliance makes them on RL8, the rhel8 build of rstudio-server,
// mysql's client libraries in python3.9. A full fat RL8 build adds the
// groups whose values are the same on both majors; these cover every
// per-major difference of the groups the appliance's fatimage builds.
// Then, as a site chains them, the appliance's doca,cuda,lustre extra
// build on this fat image (checkApplianceExtraBuild): the site's URLs,
// templated from the VM's major, name the rhel8 vendor mirrors and
// cuda-rhel8.repo, and slurm_recompile rebuilds this image's Slurm.
func TestFatBuildRocky8(t *testing.T) {
	labtest.Require(t)
	name := fmt.Sprintf("e2e-rl8-%d", time.Now().Unix())
	m := filepath.Join(t.TempDir(), "rl8.json")
	r := build(t, []string{"fat-common.pkr.hcl", "fat-rl8.pkr.hcl"},
		"-var", "image_name="+name, "-var", "source_image_name="+lab.BaseImage8Name, "-var", "manifest_output="+m,
		"-var", "releases_url="+theLab.Releases.URL())
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	img := findImage(t, name)
	labtest.RequireClean(t, theLab)
	man := readFatManifest(t, m)
	if man.Image.Snapshots["baseos"] == "" {
		t.Errorf("manifest image %+v", man.Image)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, stop := labtest.BootDial(ctx, t, theLab, name+"-boot", img.ID)
	defer stop()
	for _, row := range []contractRow{
		{"Rocky 8.10", ". /etc/os-release; echo $VERSION_ID; cat /etc/rocky-release; python3 -c 'import json; print(json.load(open(\"/var/lib/image/image.json\"))[\"os\"])'",
			"8.10\nRocky Linux release 8.10 (Green Obsidian)\nRocky 8.10"},
		{"el8 packages, python39 beside python36's python3", "rpm -q --qf '%{NAME}-%{VERSION}-%{RELEASE}\\n' python36 python39 epel-release python3.12 turbovnc rstudio-server",
			"python36-3.6.8-39.module+el8.10.0+1910+234ad790.rocky\npython39-3.9.20-2.module+el8.10.0+1960+7c8e7f4a\nepel-release-8-22.el8\n" +
				"python3.12-3.12.9-1.el8_10.1\nturbovnc-3.0.1-20230811\nrstudio-server-2025.05.1+513-1.rhel8"},
		{"nothing of el9", "rpm -qa --qf '%{RELEASE}\\n' | grep -c el9 || true", "0"},
		{"the venvs made with python3.9", "readlink /opt/slurm-tools/bin/python3.9 /usr/lib/ansible-init/bin/python3.9 /opt/websockify-py39/bin/python3.9; " +
			"grep -c 'python3.9 -m venv /opt/slurm-tools$' /opt/slurm-tools/pyvenv.cfg; /opt/slurm-tools/bin/slurm-openstack-rebuild; " +
			"/usr/lib/ansible-init/bin/python -c 'import ansible; print(ansible.__version__)'",
			"/usr/bin/python3.9\n/usr/bin/python3.9\n/usr/bin/python3.9\n1\nslurm-openstack-rebuild (lab stand-in) 3.0\n8.7.0"},
		{"mysql: client libraries in python3.9", "/usr/bin/python3.9 -c 'import pymysql; print(pymysql.__version__)'", "1.1.1"},
		{"openhpc: Slurm from OpenHPC 2's updates, the repository's build", "rpm -q --qf '%{NAME}-%{VERSION}-%{RELEASE} %{BUILDHOST}\\n' slurm-ohpc slurm-slurmd-ohpc",
			"slurm-ohpc-23.11.10-321.ohpc.3.2 lab.invalid\nslurm-slurmd-ohpc-23.11.10-321.ohpc.3.2 lab.invalid"},
	} {
		if got := c.Run(t, row.cmd); got != row.want {
			t.Errorf("%s:\n%s\nprints\n%s\nwant\n%s", row.row, row.cmd, got, row.want)
		}
	}
	if !strings.Contains(r.Output(), "/server/rhel8/x86_64/rstudio-server-rhel-2025.05.1-513-x86_64.rpm") {
		t.Errorf("the build does not name the rhel8 URL:\n%s", r.Output())
	}
	stop()
	labtest.RequireClean(t, theLab)
	// the newest kernel is the update's: the fat build updates
	t.Run("appliance extra build", func(t *testing.T) {
		checkApplianceExtraBuild(t, "8", "doca,cuda,lustre", name, img.ID, "4.18.0-553.81.1.el8_10", slurmPackages(man.Packages))
	})
}

// TestApplianceValuesBuildRocky8 builds on Rocky 8.10 from the site's
// appliance (its .stackhpc environment): the site's Ansible resolves the
// variables with the RL8 VM's facts (appliances_extra_packages' python312
// on 8.10, not 8.9's python36), and the groups take their RL8 values for
// the major the facts say (the slurm-tools venv of the rebuild group,
// made with python3.9).
func TestApplianceValuesBuildRocky8(t *testing.T) {
	labtest.Require(t)
	site := appliancesite.New(t, ".stackhpc")
	name := fmt.Sprintf("e2e-appliance-rl8-%d", time.Now().Unix())
	vars := applianceVars(t, t.TempDir(), site, theLab.SnapshotReposFor("8", repos.NewerTimestamp))
	r := build(t, []string{"fat-common.pkr.hcl", "fat-appliance.pkr.hcl"},
		append(labBinaryVars(), "-var", "image_name="+name, "-var-file", vars, "-var", "source_image_name="+lab.BaseImage8Name,
			"-var", "inventory_groups=extra_packages,openondemand,kernel_modules,rebuild")...)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	img := findImage(t, name)
	labtest.RequireClean(t, theLab)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, stop := labtest.BootDial(ctx, t, theLab, name+"-boot", img.ID)
	defer stop()
	for _, row := range []contractRow{
		{"Rocky 8.10 from the site's values", "python3 -c 'import json; i = json.load(open(\"/var/lib/image/image.json\")); print(i[\"os\"], i[\"appliance\"][\"values\"])'", "Rocky 8.10 site"},
		{"the facts' extra packages and el8 packages", "rpm -q --qf '%{NAME}-%{VERSION}-%{RELEASE}\\n' python3.12 ondemand mod_auth_openidc; rpm -q python36 >/dev/null && echo python36 || true",
			"python3.12-3.12.9-1.el8_10.1\nondemand-4.1.4-1.el8\nmod_auth_openidc-2.4.10-1.el8\npython36"},
		{"the slurm-tools venv made with python3.9", "readlink /opt/slurm-tools/bin/python3.9; rpm -q --qf '%{NAME}\\n' python39", "/usr/bin/python3.9\npython39"},
	} {
		if got := c.Run(t, row.cmd); got != row.want {
			t.Errorf("%s:\n%s\nprints\n%s\nwant\n%s", row.row, row.cmd, got, row.want)
		}
	}
}
