package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// checkExtraBuild does the appliance's "extra" build on top of the fat
// image TestApplianceExample built (fatImageID): example/extra with the
// checked-in appliance inventory layout (inv) and inventory_groups =
// "doca,cuda", as the appliance's extra.yml workflow builds RL9, with the
// lab's stand-in vendor repositories doca and cuda. Checked from outside:
// validate names the missing repositories without them; the build does
// not update and does no cluster step (the host is in neither group);
// doca's kernel support ran; the pinned packages, units, PATH line,
// image.json keys, disabled repositories and no credentials in the
// booted image.
func checkExtraBuild(t *testing.T, p *packertest.Packer, dir string, env, vars []string, inv, fatImageID string) {
	t.Helper()
	extraDir, _ := filepath.Abs("../../example/extra")
	groups := []string{"-var", inv, "-var", "extra_inventory_groups=doca,cuda", "-var", "extra_name=extra-doca-cuda"}

	// without the vendor repositories, validate fails naming each
	r := p.Run(t, dir, env, append(append([]string{"validate"}, groups...), append(slices.Clone(vars), extraDir)...)...)
	for _, want := range []string{`group "doca" needs the vendor repository "doca"`, `group "cuda" needs the vendor repository "cuda"`} {
		if r.ExitCode == 0 || !strings.Contains(r.Output(), want) {
			t.Errorf("validate without vendor repositories: exit %d, want %q:\n%s", r.ExitCode, want, r.Output())
		}
	}

	// the site's vendor repositories: DOCA's unsigned as the appliance
	// configures it; CUDA's signed (in the lab with the lab key, which
	// the fat build imported under Rocky's name)
	doca, ok1 := theLab.VendorRepo("doca")
	cuda, ok2 := theLab.VendorRepo("cuda")
	if !ok1 || !ok2 {
		t.Fatal("the lab serves no doca or cuda vendor repository")
	}
	doca["gpgcheck"] = "false"
	cuda["gpgcheck"] = "true"
	cuda["gpgkey"] = "file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9"
	var hcl strings.Builder
	hcl.WriteString("vendor_repos = [\n")
	for _, repo := range []map[string]string{doca, cuda} {
		hcl.WriteString("  {")
		for _, k := range sortedKeys(repo) {
			fmt.Fprintf(&hcl, " %s = %q,", k, repo[k])
		}
		hcl.WriteString(" },\n")
	}
	hcl.WriteString("]\n")
	vendorVars := filepath.Join(dir, "vendor.pkrvars.hcl")
	if err := os.WriteFile(vendorVars, []byte(hcl.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	manifest, imageManifest := filepath.Join(dir, "extra.json"), filepath.Join(dir, "extra-image-manifest.json")
	args := append([]string{"build", "-var", "manifest_output_path=" + manifest, "-var", "image_manifest_path=" + imageManifest, "-var-file", vendorVars}, groups...)
	r = p.Run(t, dir, env, append(args, append(slices.Clone(vars), extraDir)...)...)
	if r.ExitCode != 0 {
		t.Fatalf("packer build example/extra (doca,cuda):\n%s", r.Output())
	}
	out := r.Output()
	if !strings.Contains(out, fatImageID) {
		t.Errorf("the extra build did not start from the fat image %s:\n%s", fatImageID, out)
	}
	// not in `update`: no dnf update; not in `cluster`: cockpit's removal
	// (a cluster step) is not in its transaction; doca's kernel support
	// ran for the kernel the VM runs
	for _, want := range []string{"doca: doca-kernel-support for the running kernel, then doca-ofed", "doca-kernel-support: building the DOCA kernel packages for 5.14.0-570.58.1.el9_6.x86_64 (lab stand-in)"} {
		if !strings.Contains(out, want) {
			t.Errorf("build output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "packages: update,") || strings.Contains(out, "  upgrade\n") || !strings.Contains(out, "to install, 0 to remove in one transaction") {
		t.Errorf("the extra build updated, or has the cluster group's removals:\n%s", out)
	}

	var m struct {
		Image struct {
			InventoryGroups []string `json:"inventory_groups"`
		} `json:"image"`
		Packages []string `json:"packages"`
		DNFRuns  int      `json:"dnf_runs"`
		Reboots  int      `json:"reboots"`
	}
	if data, err := os.ReadFile(imageManifest); err != nil || json.Unmarshal(data, &m) != nil {
		t.Fatalf("image manifest: %v", err)
	}
	for _, g := range []string{"builder", "doca", "cuda", "kernel_modules", "dnf_repos"} {
		if !slices.Contains(m.Image.InventoryGroups, g) {
			t.Errorf("image.json inventory_groups lacks %s: %v", g, m.Image.InventoryGroups)
		}
	}
	for _, g := range []string{"cluster", "update", "fatimage"} {
		if slices.Contains(m.Image.InventoryGroups, g) {
			t.Errorf("the extra build's host is in %s: %v", g, m.Image.InventoryGroups)
		}
	}
	// module enable, the transaction, doca-ofed after the kernel support
	// (docs/provisioners/fatimage.mdx: only doca pays the third)
	if m.DNFRuns != 3 || m.Reboots != 0 {
		t.Errorf("dnf runs %d (want 3), reboots %d (want 0)", m.DNFRuns, m.Reboots)
	}

	extra := readArtifact(t, manifest)
	img := findImage(t, extra.CustomData["image_name"])
	labtest.RequireClean(t, theLab)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	_, c, stop := labtest.BootDial(ctx, t, theLab, extra.CustomData["image_name"]+"-check", img.ID)
	defer stop()
	rows := []contractRow{
		{"cuda: nvidia-open at the sheet's pin, from the 610-open stream", "rpm -q --qf '%{NAME}-%{EPOCH}:%{VERSION}-%{RELEASE}\\n' nvidia-open nvidia-driver",
			"nvidia-open-3:610.57.04-1.el9\nnvidia-driver-3:610.57.04-1.el9"},
		{"cuda: cuda-toolkit 13.3.1-1, nvidia-gds, cmake", "rpm -q --qf '%{NAME}-%{VERSION}-%{RELEASE}\\n' cuda-toolkit nvidia-gds cmake",
			"cuda-toolkit-13.3.1-1\nnvidia-gds-13.3.1-1\ncmake-3.26.5-2.el9"},
		{"cuda: nvidia-persistenced enabled", "systemctl is-enabled nvidia-persistenced.service", "enabled"},
		// (Rocky's /etc/profile sources sh.local; the lab's Debian one does not)
		{"cuda: sh.local puts the newest toolkit on PATH", "grep cuda /etc/profile.d/sh.local; sh -c '. /etc/profile.d/sh.local; command -v nvcc'",
			"export PATH=$PATH:$(ls -1d /usr/local/cuda-* | sort -V | tail -1)/bin\n/usr/local/cuda-13.3/bin/nvcc"},
		{"doca: doca-extra, the generated kernel repository RPM, doca-ofed", "rpm -q --qf '%{NAME}-%{VERSION}\\n' doca-extra doca-kernel-repo doca-ofed mlnx-ofa_kernel",
			"doca-extra-3.2.3\ndoca-kernel-repo-3.2.3\ndoca-ofed-3.2.3\nmlnx-ofa_kernel-25.10"},
		{"doca: kernel-devel of the kernel the VM ran", "rpm -q --qf '%{VERSION}-%{RELEASE}\\n' kernel-devel", "5.14.0-570.58.1.el9_6"},
		{"doca: no /tmp/DOCA.* left", "ls -d /tmp/DOCA.* 2>/dev/null | wc -l", "0"},
		{"dnf_repos: vendor repositories disabled, no credentials", "sudo grep -h '^enabled' /etc/yum.repos.d/doca.repo /etc/yum.repos.d/cuda-rhel9.repo | tr -d ' ' | sort -u; sudo grep -rlE '^(username|password)' /etc/yum.repos.d | wc -l",
			"enabled=0\n0"},
	}
	for _, row := range rows {
		if got := c.Run(t, row.cmd); got != row.want {
			t.Errorf("extra build row %q:\n%s\nprints\n%s\nwant\n%s", row.row, row.cmd, got, row.want)
		}
	}
	var info map[string]any
	if err := json.Unmarshal([]byte(c.Run(t, "cat /var/lib/image/image.json")), &info); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"cuda": "13.3.1", "doca": "3.2.3", "ofed": "25.10"} {
		if info[k] != want {
			t.Errorf("image.json %s = %v, want %s", k, info[k], want)
		}
	}
	requireNoSecrets(t, imageFiles(t, img.ID))
	stop()
	labtest.RequireClean(t, theLab)
}

// checkLustreBuilt checks, on the booted image of an extra build with
// lustre (c) and in the build's output (out), that the lustre role built
// the client RPMs from the lab's lustre-release at 2.15.8 and installed
// them: kernel-devel of the running kernel (the host's, ansible_kernel)
// beside doca's of the newest kernel package (kernel), the module under
// the running kernel's /lib/modules, lfs of the version, the build
// directory deleted by the role itself (its task changed: the cleanup
// empties /tmp anyway).
func checkLustreBuilt(t *testing.T, c *labtest.Client, out, major, kernel string) {
	t.Helper()
	running := c.Run(t, "uname -r")
	devel := []string{kernel + ".x86_64", running}
	slices.Sort(devel)
	for _, row := range []contractRow{
		{"lustre: the client RPMs the role built, for the major", "rpm -q --qf '%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}\\n' kmod-lustre-client lustre-client",
			"kmod-lustre-client-2.15.8-1.el" + major + ".x86_64\nlustre-client-2.15.8-1.el" + major + ".x86_64"},
		{"lustre: the module for the running kernel, mount.lustre, lfs", "ls /lib/modules/$(uname -r)/extra/lustre-client/fs; rpm -qf --qf '%{NAME}\\n' /usr/sbin/mount.lustre; lfs --version",
			"lustre.ko\nlustre-client\nlfs 2.15.8"},
		{"kernel-devel: doca's of the newest kernel, the lustre role's of the running one", "ls /usr/src/kernels", strings.Join(devel, "\n")},
		{"lustre: no build directory left", "ls -d /tmp/lustre-release 2>/dev/null | wc -l", "0"},
	} {
		if got := c.Run(t, row.cmd); got != row.want {
			t.Errorf("lustre row %q:\n%s\nprints\n%s\nwant\n%s", row.row, row.cmd, got, row.want)
		}
	}
	for _, want := range []string{"fatimage: ansible: role lustre (tasks_from install.yml) in ansible/fatimage.yml", "TASK [lustre : Build lustre]"} {
		if !strings.Contains(out, want) {
			t.Errorf("build output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`TASK \[lustre : Delete lustre build dir\][^\n]*\n[^\n]*changed: \[default\]`).MatchString(out) {
		t.Errorf("the role did not delete its build directory:\n%s", out)
	}
}

// slurmPackages are the Slurm packages among a manifest's packages
// (rpm -qa names), sorted as LC_ALL=C sort does.
func slurmPackages(packages []string) []string {
	var out []string
	for _, p := range packages {
		if strings.HasPrefix(p, "slurm-") {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkApplianceExtraBuild does the appliance's extra build (groups, the
// build's inventory_groups: the appliance's doca,cuda,lustre) on top of
// the fat image sourceName (sourceID) of Rocky major, whose newest
// kernel is kernel and whose Slurm packages are slurm (rpm -qa names),
// from the site's appliance, as the appliance runs it: testworld/appliancesite's
// extra environment over the real checkout, whose group_vars point
// doca_repo_url and cuda_repo_url, templated from the VM's major, at the
// lab's vendor mirrors, pin a newer driver and toolkit, and point
// lustre_repo at the lab's git server, and whose inventory puts cuda
// hosts in slurm_recompile. No repos entry names a vendor repository; the
// repositories are the major's snapshots, their -source ones too, as a
// site's timestamps file has them. Checked from outside: the
// repositories' files as the roles write them, from the site's URLs for
// the major, disabled and without credentials; the site's pins at the
// major's EVRs; doca's kernel support; the lustre role's build
// (checkLustreBuilt); the fat image's Slurm rebuilt with NVML
// (checkRecompiledSlurm); image.json's record of the variables.
func checkApplianceExtraBuild(t *testing.T, major, groups, sourceName, sourceID, kernel string, slurm []string) {
	t.Helper()
	site := appliancesite.New(t, appliancesite.Extra)
	dir := t.TempDir()
	name := fmt.Sprintf("e2e-appliance-extra-rl%s-%d", major, time.Now().Unix())
	snaps := theLab.SnapshotReposFor(major, repos.NewerTimestamp)
	vars := applianceVars(t, dir, site, snaps)
	// (no binaries: a template's binaries entry would add them)
	r := build(t, []string{"fat-common.pkr.hcl", "fat-appliance.pkr.hcl"}, "-var", "image_name="+name, "-var", "inventory_groups="+groups,
		"-var", "source_image_name="+sourceName, "-var-file", vars)
	if r.ExitCode != 0 {
		t.Fatalf("packer build of the appliance's extra build:\n%s", r.Output())
	}
	out := r.Output()
	if strings.Contains(out, theLab.ArkPassword) {
		t.Fatal("the Ark password appeared in packer's output")
	}
	for _, want := range []string{sourceID, "native: role doca in ansible/fatimage.yml: group doca", "native: role cuda (tasks_from",
		"doca-kernel-support: building the DOCA kernel packages for " + kernel + ".x86_64 (lab stand-in)", "ansible: role slurm_recompile"} {
		if !strings.Contains(out, want) {
			t.Errorf("build output lacks %q:\n%s", want, out)
		}
	}
	img := findImage(t, name)
	labtest.RequireClean(t, theLab)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	_, c, stop := labtest.BootDial(ctx, t, theLab, name+"-check", img.ID)
	defer stop()
	content := strings.TrimRight(theLab.Env["ARK_CONTENT_URL"], "/")
	docaURL := content + "/doca/3.2.3/rhel" + major + "/x86_64/" + repos.NewerTimestamp + "/"
	cudaBase := content + "/cuda/repos/rhel" + major + "/x86_64/" + repos.NewerTimestamp
	el, cudaFile := ".el"+major, "cuda-rhel"+major
	rows := []contractRow{
		{"cuda: the site's driver pin (cuda_nvidia_driver_version) from the 610-open stream", "rpm -q --qf '%{NAME}-%{EPOCH}:%{VERSION}-%{RELEASE}\\n' nvidia-open nvidia-driver",
			"nvidia-open-3:610.60.02-1" + el + "\nnvidia-driver-3:610.60.02-1" + el},
		{"cuda: the site's toolkit pin (cuda_package_version)", "rpm -q --qf '%{NAME}-%{VERSION}-%{RELEASE}\\n' cuda-toolkit", "cuda-toolkit-13.4.0-1"},
		{"doca: doca-extra, the generated kernel repository RPM, doca-ofed", "rpm -q --qf '%{NAME}-%{VERSION}\\n' doca-extra doca-kernel-repo doca-ofed",
			"doca-extra-3.2.3\ndoca-kernel-repo-3.2.3\ndoca-ofed-3.2.3"},
		{"doca: the major's build of doca-ofed", "rpm -q --qf '%{RELEASE}\\n' doca-ofed", "1" + el},
		{"doca: the role's repository file from doca_repo_url, gpgcheck off, disabled", "sudo grep -E '^(\\[|baseurl|gpgcheck|enabled)' /etc/yum.repos.d/doca.repo | tr -d ' '",
			"[doca]\nbaseurl=" + docaURL + "\nenabled=0\ngpgcheck=0"},
		{"cuda: the .repo file cuda_repo_url names, as the major's cuda-rhelN.repo, disabled", "sudo grep -E '^(\\[|baseurl|gpgcheck|gpgkey|enabled)' /etc/yum.repos.d/" + cudaFile + ".repo | tr -d ' '",
			"[" + cudaFile + "-x86_64]\nbaseurl=" + cudaBase + "\nenabled=0\ngpgcheck=1\ngpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-" + major},
		{"no credentials in any repository file", "sudo grep -rlE '^(username|password)' /etc/yum.repos.d | wc -l", "0"},
	}
	runRows(t, c, "appliance extra build", rows)
	var info struct {
		CUDA      string `json:"cuda"`
		Appliance struct {
			Values        string
			FromAppliance []struct {
				Into, Variable string
				Values         []string
			} `json:"from_appliance"`
			Ansible []struct {
				Kind, Name, File, Phase string
				TasksFrom               string `json:"tasks_from"`
			} `json:"ansible"`
		} `json:"appliance"`
	}
	if err := json.Unmarshal([]byte(c.Run(t, "cat /var/lib/image/image.json")), &info); err != nil {
		t.Fatal(err)
	}
	checkLustreBuilt(t, c, out, major, kernel)
	if got := fmt.Sprint(info.Appliance.Ansible); got != "[{role lustre ansible/fatimage.yml install install.yml} {role slurm_recompile ansible/fatimage.yml install }]" {
		t.Errorf("image.json appliance.ansible %s, want the lustre role's install.yml, then slurm_recompile, in fatimage.yml's order", got)
	}
	got := map[string]string{}
	for _, v := range info.Appliance.FromAppliance {
		got[v.Into+" "+v.Variable] = strings.Join(v.Values, " ")
	}
	if info.CUDA != "13.4.0" || info.Appliance.Values != "site" || got["repos/doca doca_repo_url"] != docaURL ||
		got["repos/cuda cuda_repo_url"] != theLab.VendorRepoFileURLFor(major, "cuda") || got["packages cuda_packages"] != "cuda-toolkit-13.4.0-1 nvidia-gds cmake" {
		t.Errorf("image.json cuda %q, appliance %q, from_appliance %v", info.CUDA, info.Appliance.Values, got)
	}
	checkRecompiledSlurm(t, c, snaps, slurm)
	requireNoSecrets(t, imageFiles(t, img.ID))
}

// checkRecompiledSlurm checks from outside the booted image of an
// appliance extra build whose host is in cuda and slurm_recompile what
// the role slurm_recompile leaves: the Slurm packages of the fat image
// it started from (slurm, rpm -qa names), each at its version, and
// every installed Slurm package the VM's rebuild of the snapshot's
// source package (not the repository's, built on lab.invalid),
// configured with NVML against the toolkit of
// the site's pin; dnf builddep's build dependency; the libnvidia-ml.so
// link; the role's rpmbuild tree and the SRPM it downloaded left as the
// appliance leaves them. The
// -source sections its dnf download enabled are the build's own (the
// snapshots'), left disabled as every other.
func checkRecompiledSlurm(t *testing.T, c *labtest.Client, snaps []any, slurm []string) {
	t.Helper()
	if len(slurm) == 0 {
		t.Error("the fat image has no Slurm for slurm_recompile to rebuild")
	}
	runRows(t, c, "slurm_recompile", []contractRow{
		{"slurm_recompile: the fat image's Slurm packages, none added or removed", "rpm -qa 'slurm-*' | LC_ALL=C sort", strings.Join(slurm, "\n")},
		{"slurm_recompile: every installed Slurm package rebuilt on the VM from the snapshot's SRPM",
			"rpm -qa --qf '%{SOURCERPM} %{BUILDHOST}\\n' | grep '^slurm-ohpc-' | sed -e 's/ lab[.]invalid$/ (the repository build)/' -e t -e 's/ .*/ (rebuilt on the VM)/' | sort -u",
			"slurm-ohpc-23.11.10-321.ohpc.3.2.src.rpm (rebuilt on the VM)"},
		{"slurm_recompile: configured with NVML of the site's toolkit (cuda_package_version 13.4.0-1)", "cat /usr/share/slurm-ohpc/lab-configure",
			"configure --with-nvml=/usr/local/cuda-13.4/targets/x86_64-linux/"},
		{"slurm_recompile: rpm-build, and munge-devel from dnf builddep", "rpm -q --qf '%{NAME}\\n' rpm-build munge-devel", "rpm-build\nmunge-devel"},
		{"slurm_recompile: the libnvidia-ml.so link", "readlink /lib64/libnvidia-ml.so; test -e /lib64/libnvidia-ml.so && echo resolves", "/lib64/libnvidia-ml.so.1\nresolves"},
		{"slurm_recompile: its rpmbuild tree, as the appliance leaves it", "sudo ls /root/rpmbuild/RPMS/x86_64 | grep -c '^slurm-.*-23[.]11[.]10-321[.]ohpc[.]3[.]2[.]x86_64[.]rpm$'", "7"},
		{"slurm_recompile: the SRPM its dnf download left in the login user's (moved) home, as the appliance leaves it",
			"sudo find / -xdev -name 'slurm-ohpc-*.src.rpm' -not -path '/var/cache/*'", "/var/lib/rocky/slurm-ohpc-23.11.10-321.ohpc.3.2.src.rpm"},
		{"no repository left enabled", "sudo grep -rlE '^[[:space:]]*enabled[[:space:]]*=[[:space:]]*1' /etc/yum.repos.d | wc -l", "0"},
	})
	// every -source section of the image's repository files: the build's
	// (the snapshots') with their baseurl, others (Rocky's plus-source)
	// only as the base image had them; all disabled
	got := map[string][]string{}
	for _, l := range strings.Split(c.Run(t, "cd /etc/yum.repos.d && sudo awk -F ' *= *' '/^\\[/ { s = $0 } s ~ /-source\\]$/ && $1 ~ /^(baseurl|enabled)$/ { print FILENAME \" \" s, $1 \"=\" $2 }' OFS=' ' *.repo"), "\n") {
		if at := strings.LastIndex(l, " "); at > 0 {
			got[l[:at]] = append(got[l[:at]], l[at+1:])
		}
	}
	content := strings.TrimRight(theLab.Env["ARK_CONTENT_URL"], "/")
	ours := 0
	for _, r := range snaps {
		m := r.(map[string]any)
		if !strings.HasSuffix(m["name"].(string), "-source") {
			continue
		}
		ours++
		key := fmt.Sprintf("%s.repo [%s]", m["repo_file"], m["repo_name"])
		want := []string{fmt.Sprintf("baseurl=%s/%s/%s", content, m["path"], m["timestamp"]), "enabled=0"}
		if !slices.Equal(got[key], want) {
			t.Errorf("%s: %v, want %v", key, got[key], want)
		}
		delete(got, key)
	}
	for key, lines := range got {
		if !slices.Equal(lines, []string{"enabled=0"}) {
			t.Errorf("%s, not the build's: %v, want enabled=0 only", key, lines)
		}
	}
	if ours == 0 {
		t.Error("the build had no -source repository")
	}
}

// runRows runs each row's command on c and reports the rows (of what)
// whose output is not the row's.
func runRows(t *testing.T, c *labtest.Client, what string, rows []contractRow) {
	t.Helper()
	for _, row := range rows {
		if got := c.Run(t, row.cmd); got != row.want {
			t.Errorf("%s row %q:\n%s\nprints\n%s\nwant\n%s", what, row.row, row.cmd, got, row.want)
		}
	}
}

// applianceVars writes, into dir, the variables of fat-appliance.pkr.hcl:
// snaps (the lab's snapshots of one major) as lab_repos, and the site's checkout, environment, roles and
// collections.
func applianceVars(t *testing.T, dir string, site *appliance.Site, snaps []any) string {
	t.Helper()
	var repoHCL []string
	for _, r := range snaps {
		var kv []string
		for k, v := range r.(map[string]any) {
			kv = append(kv, fmt.Sprintf("%s = %q", k, fmt.Sprint(v)))
		}
		slices.Sort(kv)
		repoHCL = append(repoHCL, "{"+strings.Join(kv, ", ")+"}")
	}
	vars := filepath.Join(dir, "appliance.pkrvars.hcl")
	list := func(l []string) string { data, _ := json.Marshal(l); return string(data) }
	hcl := fmt.Sprintf("lab_repos = [%s]\nappliance_dir = %q\nappliance_environment = %q\nappliance_roles_path = %s\nappliance_collections_path = %s\n",
		strings.Join(repoHCL, ",\n"), site.Repo, site.Environment, list(site.RolesPath), list(site.CollectionsPath))
	if err := os.WriteFile(vars, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return vars
}

// TestApplianceRecompileNeedsSourceRepos is the appliance's doca,cuda
// extra build (with openhpc, for a Slurm to rebuild) on each major's
// base image with the snapshots but not their -source repositories, as a
// site whose Pulp lacks them: the image's own -source sections (RL9's
// rocky.repo and rocky-extras.repo, RL8's Rocky-Sources.repo, and
// epel.repo from the build's epel-release) are what slurm_recompile's dnf
// download --source enables, at public mirrors the lab's VMs cannot
// reach. The build warns naming each before the role runs, and fails
// with that message, leaving no image and nothing in the cloud.
func TestApplianceRecompileNeedsSourceRepos(t *testing.T) {
	labtest.Require(t)
	runs := map[string]func(t *testing.T){}
	for _, tc := range []struct{ major, image, named string }{
		{"9", lab.BaseImageName, "rocky-extras.repo [extras-source], rocky.repo [baseos-source], rocky.repo [appstream-source], rocky.repo [crb-source], epel.repo [epel-source]"},
		{"8", lab.BaseImage8Name, "Rocky-Sources.repo [baseos-source], Rocky-Sources.repo [appstream-source], epel.repo [epel-source]"},
	} {
		runs["rl"+tc.major] = func(t *testing.T) {
			site := appliancesite.New(t, appliancesite.Extra)
			name := fmt.Sprintf("e2e-recompile-nosource-rl%s-%d", tc.major, time.Now().Unix())
			var snaps []any
			for _, r := range theLab.SnapshotReposFor(tc.major, repos.NewerTimestamp) {
				if !strings.HasSuffix(r.(map[string]any)["name"].(string), "-source") {
					snaps = append(snaps, r)
				}
			}
			vars := applianceVars(t, t.TempDir(), site, snaps)
			r := build(t, []string{"fat-common.pkr.hcl", "fat-appliance.pkr.hcl"}, "-var", "image_name="+name, "-var", "inventory_groups=openhpc,doca,cuda",
				"-var", "source_image_name="+tc.image, "-var-file", vars)
			out := r.Output()
			for _, want := range []string{"WARNING: role slurm_recompile: its dnf download --source enables the -source section of every enabled repository",
				"give the snapshots' source repositories in repos"} {
				if r.ExitCode == 0 || !strings.Contains(out, want) {
					t.Errorf("exit %d, want %q in:\n%s", r.ExitCode, want, out)
				}
			}
			for _, section := range strings.Split(tc.named, ", ") {
				// in the warning and in the build's error
				if n := strings.Count(out, section); n < 2 {
					t.Errorf("%s named %d times, want the warning and the error:\n%s", section, n, out)
				}
			}
			requireNoImage(t, name)
		}
	}
	sideBySide(t, "majors", runs)
	labtest.RequireClean(t, theLab)
}
