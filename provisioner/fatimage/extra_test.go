package fatimage

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/downloads"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/lines"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/system"
)

// hostOSMajor is the major version of the machine running the tests,
// which the placeholders of a locally run transaction see.
func hostOSMajor(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("/etc/os-release")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^VERSION_ID="?([0-9]+)`).FindStringSubmatch(string(data))
	if m == nil {
		t.Fatalf("no VERSION_ID in /etc/os-release:\n%s", data)
	}
	return m[1]
}

// The transaction fills in a group's package placeholders on the VM:
// kernel-devel for the running kernel (rpm's name for it; the newest
// installed kernel where rpm does not know the running one), the OS
// major, and per-OS pins that drop out on other majors.
func TestPackageSpecPlaceholders(t *testing.T) {
	major := hostOSMajor(t)
	other := "el1" + major // never this major
	dnf := `if [ "$1" = -y ]; then :; fi`
	for _, tc := range []struct {
		name, rpm, uname, want string
	}{
		{"running kernel known", `case "$1 $2" in "-q kernel-core-5.14.0-570.58.1.el9_6.x86_64") exit 0 ;; *) exit 1 ;; esac`, "5.14.0-570.58.1.el9_6.x86_64",
			"install kernel-devel-5.14.0-570.58.1.el9_6.x86_64 nvidia-open-3:610.57.04-1.el" + major + " ceph-common-18.2.7 htop\n"},
		{"running kernel not a package", `case "$1 $2" in "-q --last") echo "kernel-core-5.14.0-570.17.1.el9_6.x86_64 Mon 01 Jan"; echo "kernel-core-5.14.0-1.el9.x86_64 Sun" ;; *) exit 1 ;; esac`, "6.1.0-40-amd64",
			"install kernel-devel-5.14.0-570.17.1.el9_6.x86_64 nvidia-open-3:610.57.04-1.el" + major + " ceph-common-18.2.7 htop\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := packagePlan{Install: []string{"kernel-devel-{running_kernel}", "nvidia-open-3:610.57.04-1.el{os_major}",
				"el" + major + ":ceph-common-18.2.7", other + ":ceph-common-17.2.7", "htop"}}
			out, _, err := runFaked(t, p.script(), map[string]string{"dnf": dnf, "rpm": tc.rpm, "uname": "echo " + tc.uname})
			if err != nil {
				t.Fatal(err, out)
			}
			if !strings.Contains(out, "dnf transaction:\n  "+tc.want) {
				t.Errorf("transaction:\n%s", out)
			}
		})
	}
	// no kernel at all: the cause is said, nothing is installed
	p := packagePlan{Install: []string{"kernel-devel-{running_kernel}"}}
	out, calls, err := runFaked(t, p.script(), map[string]string{"dnf": dnf, "rpm": "exit 1", "uname": "echo 6.1.0"})
	if err == nil || !strings.Contains(out, "!fatimage: no kernel-core package is installed") || slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, "dnf|") }) {
		t.Errorf("no kernel: %v %v\n%s", err, calls, out)
	}
}

// doca runs doca-kernel-support, installs the one repository RPM it
// generated without a signature check, and after the profile removes the
// build directory and rebuilds the initramfs; a tool that leaves no RPM
// fails the step naming it.
func TestDOCAScript(t *testing.T) {
	tmp := t.TempDir()
	tool := "/opt/mellanox/doca/tools/doca-kernel-support"
	// the script's paths are absolute: run it with them rewritten into tmp
	render := func(fn string) *vmScript {
		body := strings.NewReplacer(tool, filepath.Join(tmp, "doca-kernel-support"), "/tmp/DOCA.", filepath.Join(tmp, "DOCA.")).Replace(scriptBody("doca"))
		return withText(newScript(), body+"\n"+fn+"\n")
	}
	gen := "#!/bin/sh\nmkdir -p " + tmp + "/DOCA.abc && : > " + tmp + "/DOCA.abc/doca-kernel-repo-3.2.3-5.14.0.el9.x86_64.rpm\n"
	if err := os.WriteFile(filepath.Join(tmp, "doca-kernel-support"), []byte(gen), 0o755); err != nil {
		t.Fatal(err)
	}
	out, calls, err := runFaked(t, render("doca_kernel_support"), map[string]string{"rpm": ""})
	if err != nil {
		t.Fatal(err, out)
	}
	if !slices.Equal(calls, []string{"rpm|-Uvh|--replacepkgs|--nosignature|" + tmp + "/DOCA.abc/doca-kernel-repo-3.2.3-5.14.0.el9.x86_64.rpm"}) {
		t.Errorf("calls %q", calls)
	}
	out, calls, err = runFaked(t, render("doca_finish"), map[string]string{"dracut": ""})
	if err != nil {
		t.Fatal(err, out)
	}
	if _, err := os.Stat(filepath.Join(tmp, "DOCA.abc")); !os.IsNotExist(err) || !slices.Equal(calls, []string{"dracut|-f"}) {
		t.Errorf("after doca_finish: %v, calls %q", err, calls)
	}
	// a tool that generates nothing
	if err := os.WriteFile(filepath.Join(tmp, "doca-kernel-support"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, _, err = runFaked(t, render("doca_kernel_support"), map[string]string{"rpm": ""})
	if err == nil || !strings.Contains(out, "!fatimage: doca: doca-kernel-support left no single") {
		t.Errorf("no RPM passed: %v\n%s", err, out)
	}
}

func downloadAt(c *plan, id string) (downloads.Download, bool) {
	for _, d := range c.Downloads {
		if d.Identity() == id {
			return d, true
		}
	}
	return downloads.Download{}, false
}

// The [opt] groups do what the appliance's roles do at build time, with
// its pins; downloads it takes unchecked are unchecked here too (and
// warned about).
func TestGroupsOpt(t *testing.T) {
	rel := map[string]any{"github_releases_url": "http://releases.lab"}
	c := mustGroups(t, []string{"k3s", "k9s", "vgpu", "opkssh", "freeipa_client", "manila"}, rel)
	for id, want := range map[string]string{
		"/usr/bin/k3s": "http://releases.lab/k3s-io/k3s/releases/download/v1.31.0+k3s1/k3s",
		"/var/lib/rancher/k3s/agent/images/k3s-airgap-images-amd64.tar.zst": "http://releases.lab/k3s-io/k3s/releases/download/v1.31.0+k3s1/k3s-airgap-images-amd64.tar.zst",
		"/usr/bin (members linux-amd64/helm)":                               "https://get.helm.sh/helm-v3.11.0-linux-amd64.tar.gz",
		"/usr/bin (members k9s)":                                            "http://releases.lab/derailed/k9s/releases/download/v0.32.5/k9s_Linux_amd64.tar.gz",
		"/usr/local/bin/opkssh":                                             "http://releases.lab/openpubkey/opkssh/releases/download/v0.13.0/opkssh-linux-amd64",
	} {
		d, ok := downloadAt(c, id)
		if !ok || d.URL != want || !d.InsecureSkipChecksum || d.SHA256 != "" {
			t.Errorf("download %s: %+v (found %v), want %s unchecked", id, d, ok, want)
		}
	}
	if d, _ := downloadAt(c, "/usr/bin/k3s"); d.Mode != "0755" {
		t.Errorf("k3s mode %q", d.Mode)
	}
	if d, _ := downloadAt(c, "/usr/bin (members linux-amd64/helm)"); !d.Extract || d.StripComponents != 1 {
		t.Errorf("helm %+v", d)
	}
	if d, _ := downloadAt(c, "/usr/local/bin/opkssh"); d.Owner != "root:opksshuser" || d.Mode != "0755" {
		t.Errorf("opkssh %+v", d)
	}
	if i := slices.IndexFunc(c.users, func(u User) bool { return u.Name == "opksshuser" }); i < 0 || !c.users[i].System || c.users[i].Shell != "/sbin/nologin" || c.users[i].Group != "opksshuser" {
		t.Errorf("users %+v", c.users)
	}
	var rpms []string
	for _, r := range c.RPMURLs {
		if !r.InsecureSkipChecksum || !r.DisableGPGCheck {
			t.Errorf("rpm_urls %+v: the appliance installs it unchecked and unsigned", r)
		}
		rpms = append(rpms, r.URL)
	}
	if !slices.Equal(rpms, []string{
		"http://releases.lab/k3s-io/k3s-selinux/releases/download/v1.6.latest.1/k3s-selinux-1.6-1.el9.noarch.rpm",
		"http://releases.lab/NVIDIA/mig-parted/releases/download/v0.12.1/nvidia-mig-manager-0.12.1-1.x86_64.rpm",
	}) {
		t.Errorf("rpm_urls %q", rpms)
	}
	for _, p := range []string{"mdevctl", "kernel-devel", "gcc", "ipa-client", "el8:ceph-common-17.2.7", "el9:ceph-common-18.2.7"} {
		if !slices.Contains(c.sets.Packages, p) {
			t.Errorf("packages lack %s: %v", p, c.sets.Packages)
		}
	}
	if !slices.ContainsFunc(c.LineEdits, func(e lines.LineEdit) bool {
		return e.Path == "/etc/environment" && e.Line == "KUBECONFIG=/etc/rancher/k3s/k3s.yaml" && !e.Create
	}) {
		t.Errorf("k3s KUBECONFIG line: %+v", c.LineEdits)
	}
	warnings := strings.Join(c.contentWarnings(), "\n")
	if strings.Count(warnings, "insecure_skip_checksum = true") != 5 {
		t.Errorf("warnings:\n%s", warnings)
	}
	// a template download for the same place replaces the group's
	sum := strings.Repeat("b", 64)
	c = mustGroups(t, []string{"k9s"}, map[string]any{"downloads": []map[string]any{
		{"url": "https://mirror.example/k9s.tar.gz", "sha256": sum, "destination": "/usr/bin", "extract": true, "members": []string{"k9s"}},
	}})
	if len(c.Downloads) != 1 || c.Downloads[0].SHA256 != sum {
		t.Errorf("template k9s %+v", c.Downloads)
	}
	// ofed is refused at validate time, saying why
	if _, err := prepareGroups(t, []string{"ofed"}, nil); err == nil || !strings.Contains(err.Error(), `group "ofed" is not supported: MLNX_OFED's installer`) {
		t.Errorf("ofed: %v", err)
	}
}

// The groups with no build-time effect are accepted from an inventory
// silently, with nothing to do.
func TestInventoryNoBuildTimeGroups(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	if err := p.Prepare(map[string]any{"inventory": applianceLayout, "inventory_groups": "resolv_conf,proxy,sshd,pulp_site"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.plan.setNames, ","); got != "always,dnf_repos,kernel_modules" {
		t.Errorf("sets %s", got)
	}
}

// With an inventory, `update` follows the appliance's update group: the
// fat build updates, an extra build does not; the option still wins.
func TestInventoryUpdate(t *testing.T) {
	vendor := []map[string]string{
		{"name": "doca", "repo_file": "doca", "repo_name": "doca", "baseurl": "https://doca.example/rhel9/x86_64/", "gpgcheck": "false"},
		{"name": "cuda", "repo_file": "cuda-rhel9", "repo_name": "cuda", "baseurl": "https://cuda.example/rhel9/x86_64/", "gpgcheck": "false"},
	}
	for _, tc := range []struct {
		name   string
		raw    map[string]any
		update bool
	}{
		{"fat", map[string]any{"inventory": applianceLayout, "inventory_groups": "fatimage", "appliance_dir": applianceDir}, true},
		{"extra", map[string]any{"inventory": applianceLayout, "inventory_groups": "doca,cuda", "repos": vendor}, false},
		{"extra, update = true", map[string]any{"inventory": applianceLayout, "inventory_groups": "doca,cuda", "repos": vendor, "update": true}, true},
		{"no inventory", map[string]any{"groups": []string{"nfs"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearArkEnv(t)
			var p Provisioner
			if err := p.Prepare(tc.raw); err != nil {
				t.Fatal(err)
			}
			if p.plan.update != tc.update {
				t.Errorf("update %v, want %v", p.plan.update, tc.update)
			}
			// the cluster steps (cockpit removal) come with the cluster group only
			if tc.name == "extra" && len(p.plan.sets.Remove) != 0 {
				t.Errorf("extra build removes %v", p.plan.sets.Remove)
			}
		})
	}
}

// doca with reboot = "auto" on an updating build: the update, the reboot
// it left pending (forced by the kernel packages), then doca's kernel
// support and profile, in that order; image.json says why it rebooted.
func TestDOCARebootsFirst(t *testing.T) {
	clearArkEnv(t)
	manifestFile := filepath.Join(t.TempDir(), "m.json")
	var p Provisioner
	if err := p.Prepare(map[string]any{"groups": []string{"doca"}, "enable_repos": []string{"doca"}, "selinux": "unchanged", "manifest_output": manifestFile}); err != nil {
		t.Fatal(err)
	}
	comm := &bootComm{}
	var out bytes.Buffer
	if err := p.Provision(context.Background(), &packersdk.BasicUi{Writer: &out, ErrorWriter: &out}, comm, nil); err != nil {
		t.Fatal(err, out.String())
	}
	// (the double reports a pending reboot after every transaction, so one
	// comes before doca too)
	if got := strings.Join(comm.log, " "); !regexp.MustCompile(`packages REBOOT kernel-packages (REBOOT )?doca doca doca cleanup`).MatchString(got) {
		t.Errorf("scripts %q", got)
	}
	m := readManifest(t, manifestFile)
	if !m.Reboot.Rebooted || !slices.Equal(m.Reboot.Why, []string{"kernel-core installed after the boot"}) {
		t.Errorf("image.json reboot %+v", m.Reboot)
	}
	// (other tests' secrets may mask letters of the UI output: no "p" here)
	if !strings.Contains(out.String(), "kernel-") || !strings.Contains(out.String(), "needs the running kernel (kernel-core installed after the boot)") {
		t.Errorf("output:\n%s", out.String())
	}
}

// The k3s group places natively what the role's run of k3s's installer
// (server, then agent; start, enable and download skipped, /usr/bin)
// writes: the two units, disabled and unstarted, reading the env files
// the role's runtime tasks template, and the links to k3s.
func TestGroupK3sInstall(t *testing.T) {
	c := mustGroups(t, []string{"k3s"}, map[string]any{"github_releases_url": "http://releases.lab"})
	for name, exec := range map[string]string{
		"k3s.service":       "ExecStart=/usr/bin/k3s server --disable=traefik --node-ip=${K3S_NODE_IP}\n",
		"k3s-agent.service": "ExecStart=/usr/bin/k3s agent --node-ip=${K3S_NODE_IP}\n",
	} {
		i := slices.IndexFunc(c.SystemdUnits, func(u system.SystemdUnit) bool { return u.Name == name })
		if i < 0 {
			t.Errorf("no unit %s in %+v", name, c.SystemdUnits)
			continue
		}
		u := c.SystemdUnits[i]
		if u.UnitState() != "disabled" {
			t.Errorf("%s state %q: the role starts and enables it at deploy", name, u.UnitState())
		}
		for _, want := range []string{exec, "Type=notify\n", "EnvironmentFile=-/etc/systemd/system/" + name + ".env\n",
			"EnvironmentFile=-/etc/default/%N\n", "EnvironmentFile=-/etc/sysconfig/%N\n", "Delegate=yes\n", "KillMode=process\n",
			"LimitNOFILE=1048576\n", "TasksMax=infinity\n", "Restart=always\n", "ExecStartPre=-/sbin/modprobe br_netfilter\n",
			"ExecStartPre=-/sbin/modprobe overlay\n", "After=network-online.target\n", "WantedBy=multi-user.target\n"} {
			if !strings.Contains(u.Content, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, u.Content)
			}
		}
		if !strings.Contains(u.Content, "ExecStartPre=/bin/sh -c 'if systemctl is-enabled --quiet nm-cloud-setup.service 2>/dev/null; then") {
			t.Errorf("%s does not refuse to start with nm-cloud-setup.service enabled:\n%s", name, u.Content)
		}
		if strings.Count(u.Content, "ExecStart=") != 1 {
			t.Errorf("%s: one ExecStart wanted:\n%s", name, u.Content)
		}
	}
	for _, cmd := range []string{"kubectl", "crictl", "ctr"} {
		if f, ok := fileAt(c, "/usr/bin/"+cmd); !ok || f.Symlink != "/usr/bin/k3s" {
			t.Errorf("/usr/bin/%s: %+v (found %v), want a link to /usr/bin/k3s", cmd, f, ok)
		}
	}
}
