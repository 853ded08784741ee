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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkApplianceExtraBuild does the appliance's doca,cuda extra build on
// top of the image sourceName (sourceID) of Rocky major, whose newest
// kernel is kernel, from the site's appliance, as the appliance runs it:
// testworld/appliancesite's extra environment over the real checkout,
// whose group_vars point doca_repo_url and cuda_repo_url, templated from
// the VM's major, at the lab's vendor mirrors and pin a newer driver and
// toolkit. No repos entry names a vendor repository. Checked from
// outside: the repositories' files as the roles write them, from the
// site's URLs for the major, disabled and without credentials; the
// site's pins at the major's EVRs; doca's kernel support; image.json's
// record of the variables.
func checkApplianceExtraBuild(t *testing.T, major, sourceName, sourceID, kernel string) {
	t.Helper()
	site := appliancesite.New(t, appliancesite.Extra)
	dir := t.TempDir()
	name := fmt.Sprintf("e2e-appliance-extra-rl%s-%d", major, time.Now().Unix())
	vars := applianceVars(t, dir, site, theLab.SnapshotReposFor(major, repos.NewerTimestamp))
	// (no binaries: a template's binaries entry would add them)
	r := build(t, []string{"fat-common.pkr.hcl", "fat-appliance.pkr.hcl"}, "-var", "image_name="+name, "-var", "inventory_groups=doca,cuda",
		"-var", "source_image_name="+sourceName, "-var-file", vars)
	if r.ExitCode != 0 {
		t.Fatalf("packer build of the appliance's extra build:\n%s", r.Output())
	}
	out := r.Output()
	if strings.Contains(out, theLab.ArkPassword) {
		t.Fatal("the Ark password appeared in packer's output")
	}
	for _, want := range []string{sourceID, "native: role doca in ansible/fatimage.yml: group doca", "native: role cuda (tasks_from",
		"doca-kernel-support: building the DOCA kernel packages for " + kernel + ".x86_64 (lab stand-in)"} {
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
		{"doca: kernel-devel of the newest kernel, at the major's EVR", "rpm -q --qf '%{VERSION}-%{RELEASE}\\n' kernel-devel", kernel},
		{"no credentials in any repository file", "sudo grep -rlE '^(username|password)' /etc/yum.repos.d | wc -l", "0"},
	}
	for _, row := range rows {
		if got := c.Run(t, row.cmd); got != row.want {
			t.Errorf("appliance extra build row %q:\n%s\nprints\n%s\nwant\n%s", row.row, row.cmd, got, row.want)
		}
	}
	var info struct {
		CUDA      string `json:"cuda"`
		Appliance struct {
			Values        string
			FromAppliance []struct {
				Into, Variable string
				Values         []string
			} `json:"from_appliance"`
		} `json:"appliance"`
	}
	if err := json.Unmarshal([]byte(c.Run(t, "cat /var/lib/image/image.json")), &info); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range info.Appliance.FromAppliance {
		got[v.Into+" "+v.Variable] = strings.Join(v.Values, " ")
	}
	if info.CUDA != "13.4.0" || info.Appliance.Values != "site" || got["repos/doca doca_repo_url"] != docaURL ||
		got["repos/cuda cuda_repo_url"] != theLab.VendorRepoFileURLFor(major, "cuda") || got["packages cuda_packages"] != "cuda-toolkit-13.4.0-1 nvidia-gds cmake" {
		t.Errorf("image.json cuda %q, appliance %q, from_appliance %v", info.CUDA, info.Appliance.Values, got)
	}
	requireNoSecrets(t, imageFiles(t, img.ID))
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
