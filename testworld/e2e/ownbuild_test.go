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

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/bench"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/pypi"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/releases"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// ownBuildGroups is the build's inventory_groups: the appliance's own fat
// build's (its CI builds with inventory_groups = fatimage), whose
// inventories put the build host in every group of the fat set
// (docs/lab.md says what each took).
const ownBuildGroups = "fatimage"

// TestApplianceOwnBuild builds the image the way the site does today, the
// official openstack builder and ansible provisioner running the
// checkout's own ansible/fatimage.yml as packer/openstack.pkr.hcl does,
// and our plugin's appliance build, both from testworld/appliancesite's
// overrides environment; it boots both images and compares what they hold
// from outside. Every difference must be a row of docs/appliance-contract.md's
// table of deliberate differences from the appliance's own build, and
// every row must still differ.
//
// FATIMAGE_OWNBUILD_GROUPS, when set, replaces ownBuildGroups for one run:
// a test-only knob for trying another set before its rows are written
// (the table is for ownBuildGroups, so only that no unlisted difference
// appears is checked, not that every row still differs).
func TestApplianceOwnBuild(t *testing.T) {
	labtest.Require(t)
	groups, partial := ownBuildGroups, false
	if g := os.Getenv("FATIMAGE_OWNBUILD_GROUPS"); g != "" {
		// a test-only knob for trying a group alone (docs/lab.md): the
		// table's rows belong to the whole set, so only listed
		// differences are checked, not that every row still differs
		groups, partial = g, true
		t.Logf("FATIMAGE_OWNBUILD_GROUPS: building %s, not the whole set; rows that do not differ are not checked", g)
	}
	site := appliancesite.New(t, appliancesite.Overrides, appliance.ParseGroups(groups)...)
	var labRepos []appliancesite.LabRepo
	for _, s := range theLab.Repos.Snapshots {
		if s.Major == "9" && !s.Vendor && s.Timestamp == repos.NewerTimestamp {
			labRepos = append(labRepos, appliancesite.LabRepo{Key: s.Repo, Major: s.Major, PulpPath: s.PulpPath, Timestamp: s.Timestamp, RepoFile: s.RepoFile})
		}
	}
	appliancesite.ForOwnBuild(t, site, labRepos, theLab.BinaryChecksums(), theLab.CA.PEM)
	if err := theLab.PyPI.Add(requirementPins(t, filepath.Join(site.Repo, "ansible", "roles", "openondemand", "files", "jupyter_requirements.txt"))...); err != nil {
		t.Fatal(err)
	}
	stamp := time.Now().Unix()
	own := fmt.Sprintf("e2e-ownbuild-appliance-%d", stamp)
	ours := fmt.Sprintf("e2e-ownbuild-fatimage-%d", stamp)

	vars := applianceVars(t, t.TempDir(), site, theLab.SnapshotRepos(repos.NewerTimestamp))
	// only the set's binary: a binaries entry installs its binary whether
	// or not a group of the build asks for it
	sum := fmt.Sprintf("binary_sha256={node_exporter = %q}", theLab.BinaryChecksums()["node_exporter"])
	args := []string{"-var", sum, "-var", "image_name=" + ours, "-var", "inventory_groups=" + groups, "-var-file", vars,
		"-var", "github_releases_url=" + theLab.Releases.URL(), "-var", "rstudio_download_url=" + theLab.Releases.URL()}
	// hpctests' HPL source: the lab's www.netlib.org serves a stand-in,
	// pinned as a site pins its mirror's file (a download entry installs
	// its file whatever the groups, so only for a host in hpctests)
	member, err := site.StaticGroups()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(member, "hpctests") {
		args = append(args, "-var", "hpl_sha256="+theLab.Releases.SHA256(releases.HPLPath))
	}
	// the two builds share nothing but the lab: side by side
	sideBySide(t, "builds", map[string]func(t *testing.T){
		"appliance": func(t *testing.T) {
			start := time.Now()
			officialBuild(t, site, own)
			t.Logf("the appliance's own build took %s", time.Since(start).Round(time.Second))
		},
		"fatimage": func(t *testing.T) {
			start := time.Now()
			r := buildWithin(t, 20*time.Minute, []string{"fat-common.pkr.hcl", "fat-appliance.pkr.hcl"}, args...)
			if r.ExitCode != 0 {
				t.Fatalf("packer build (fatimage) failed:\n%s", r.Output())
			}
			t.Logf("our build took %s", time.Since(start).Round(time.Second))
		},
	})
	labtest.RequireClean(t, theLab)

	var a, b ownState
	sideBySide(t, "end states", map[string]func(t *testing.T){
		"appliance": func(t *testing.T) { a = bootEndState(t, findImage(t, own).ID, "ownbuild-appliance") },
		"fatimage":  func(t *testing.T) { b = bootEndState(t, findImage(t, ours).ID, "ownbuild-fatimage") },
	})
	// values from the site's variables that both images must hold: both
	// without them would compare equal
	for _, key := range []string{
		"package sssd-ldap", // .stackhpc's builder: sssd_install_ldap
		// openondemand: the overrides' openondemand_auth oidc, .stackhpc's app partitions
		"package mod_auth_openidc", "package ondemand-dex", "package nodejs", "file /var/www/ood/apps/sys/rstudio",
		// compute: manila's Ceph client, the OOD compute groups' desktop, RStudio and code-server
		"package ceph-common", "package turbovnc", "package rstudio-server", "package code-server",
		// login: hpctests' HPL source from the lab's www.netlib.org, the
		// firewalld zone, fail2ban's jail, a login node's Slurm client
		"file /opt/hpl/hpl-2.3.tar.gz", "file /etc/firewalld/zones/public.xml", "file /etc/fail2ban/jail.local", "package ohpc-slurm-client",
		// gateway's ansible-init playbook
		"file /etc/ansible-init/playbooks/05-gateway-init.yml",
	} {
		if !partial && (a[key] == "" || b[key] == "" || a[key] == "absent" || b[key] == "absent") {
			t.Errorf("%s: appliance's own build %q, fatimage %q; want it in both", key, a[key], b[key])
		}
	}
	differ := a.diff(b)
	allowed := ownBuildAllowList(t)
	for _, key := range sortedKeys(differ) {
		d := differ[key]
		if allowed[key] != "" {
			// logged: a deliberate row's why must match what differs
			t.Logf("%s differs as docs/appliance-contract.md lists (appliance's own build: %s; fatimage: %s)", key, d[0], d[1])
			continue
		}
		t.Errorf("%s differs (appliance's own build: %s; fatimage: %s) and is not in docs/appliance-contract.md's table of differences from the appliance's own build", key, d[0], d[1])
	}
	for _, key := range sortedKeys(allowed) {
		if _, ok := differ[key]; !ok && !partial {
			t.Errorf("docs/appliance-contract.md lists %s as different from the appliance's own build, but both images have the same", key)
		}
	}
}

// requirementPins are the name==version pins of a requirements file as
// the lab's index's stand-ins: compute's jupyter venv installs the
// appliance's pins, which a site's mirror of PyPI has.
func requirementPins(t *testing.T, file string) []pypi.Dist {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []pypi.Dist
	for _, l := range strings.Split(string(data), "\n") {
		if name, version, ok := strings.Cut(strings.TrimSpace(l), "=="); ok && !strings.HasPrefix(name, "#") {
			out = append(out, pypi.Dist{Name: name, Version: version})
		}
	}
	return out
}

// officialBuild runs packer/openstack.pkr.hcl's build with the official
// plugins: its source and provisioner settings, against the lab.
func officialBuild(t *testing.T, site *appliance.Site, name string) {
	t.Helper()
	p := packertest.Setup(t)
	bench.InstallOfficial(t, p)
	dir := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "build.pkr.hcl"), []byte(officialTemplate(site, name)), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := p.Command(ctx, dir, theLab.Environ(), "build", ".")
	out, err := cmd.CombinedOutput()
	if err != nil {
		var refused []string
		for _, r := range theLab.Pulp.Requests() {
			if r.Status != 200 {
				refused = append(refused, fmt.Sprintf("%s %s (user %q): %d", r.Method, r.Path, r.Username, r.Status))
			}
		}
		t.Fatalf("packer build (the appliance's own: official builder, ansible/fatimage.yml) failed: %v\n%s\n(the whole log: %s)\nthe lab's Ark answered:\n%s",
			err, logtail.Lines(string(out), 80), keepLog(t, out), logtail.Lines(strings.Join(refused, "\n"), 20))
	}
}

// keepLog writes a failed build's whole output to a file that outlives
// the test (t.TempDir's would not) and returns its path: an Ansible run's
// first failure is often far above the tail the failure message shows,
// and the whole of it in the test's output would bury every other line.
func keepLog(t *testing.T, out []byte) string {
	f, err := os.CreateTemp("", "ownbuild-"+strings.ReplaceAll(t.Name(), "/", "_")+"-*.log")
	if err == nil {
		_, err = f.Write(out)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Sprintf("not kept: %v", err)
	}
	return f.Name()
}

// officialTemplate is packer/openstack.pkr.hcl with the lab's values for
// its variables; the provisioner's environment is what the environment's
// `activate` exports, with the site's Galaxy content paths.
func officialTemplate(site *appliance.Site, name string) string {
	q := func(v any) string { data, _ := json.Marshal(v); return string(data) }
	cfgPaths := func(rel string, extra []string) string {
		return strings.Join(append([]string{filepath.Join(site.Repo, "ansible", rel)}, extra...), ":")
	}
	env := []string{
		"ANSIBLE_CONFIG=" + filepath.Join(site.Environment, "ansible.cfg"),
		"APPLIANCES_ENVIRONMENT_ROOT=" + site.Environment,
		"APPLIANCES_REPO_ROOT=" + site.Repo,
		"ANSIBLE_ROLES_PATH=" + cfgPaths("roles", site.RolesPath),
		"ANSIBLE_COLLECTIONS_PATH=" + cfgPaths("collections", site.CollectionsPath),
		"ANSIBLE_NOCOLOR=1",
	}
	groups := append([]string{"builder"}, site.Groups...)
	return fmt.Sprintf(`packer {
  required_plugins {
    openstack = { source = "github.com/hashicorp/openstack", version = ">= 1.0.0" }
    ansible   = { source = "github.com/hashicorp/ansible", version = ">= 1.1.1" }
  }
}

source "openstack" "openhpc" {
  cloud                   = %s
  flavor                  = "m1.small"
  use_blockstorage_volume = true
  volume_size             = 20
  instance_metadata       = { ansible_init_disable = "true" }
  floating_ip_network     = "public"
  source_image_name       = "Rocky-9-GenericCloud-Base-9.6"
  ssh_username            = "rocky"
  ssh_timeout             = "20m"
  image_disk_format       = "raw"
  image_visibility        = "private"
  image_name              = %s
}

build {
  sources = ["source.openstack.openhpc"]
  provisioner "ansible" {
    playbook_file    = %s
    groups           = %s
    use_proxy        = false
    ansible_env_vars = %s
    extra_arguments  = ["--limit", "builder", "-i", %s, "-e", %s]
  }
}
`, q(theLab.Env["OS_CLOUD"]), q(name), q(filepath.Join(site.Repo, "ansible", "fatimage.yml")), q(groups), q(env),
		q(filepath.Join(site.Repo, "packer", "ansible-inventory.sh")), q("@"+filepath.Join(site.Repo, "packer", "openhpc_extravars.yml")))
}
