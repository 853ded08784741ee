package fatimage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/files"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/git"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/system"
)

// prepareGroups prepares a configuration of groups and extra options.
func prepareGroups(t *testing.T, groups []string, extra map[string]any) (*plan, error) {
	t.Helper()
	clearArkEnv(t)
	raw := map[string]any{"groups": groups}
	for k, v := range extra {
		raw[k] = v
	}
	var c Config
	return c.prepare(raw)
}

func mustGroups(t *testing.T, groups []string, extra map[string]any) *plan {
	t.Helper()
	c, err := prepareGroups(t, groups, extra)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fileAt(c *plan, dst string) (files.File, bool) {
	for _, f := range c.Files {
		if f.Destination == dst {
			return f, true
		}
	}
	return files.File{}, false
}

func unitState(c *plan, name string) string {
	for _, u := range c.SystemdUnits {
		if u.Name == name {
			return u.UnitState()
		}
	}
	return ""
}

func TestGroupKernelModulesJournaldRaid(t *testing.T) {
	c := mustGroups(t, []string{"kernel_modules", "journald", "raid"}, nil)
	if len(c.ModprobeBlacklists) != 1 || c.ModprobeBlacklists[0].Name != "appliance" ||
		strings.Join(c.ModprobeBlacklists[0].Modules, " ") != "esp4 esp6 rxrpc ip6_tunnel act_pedit openvswitch" {
		t.Errorf("modprobe_blacklist %+v", c.ModprobeBlacklists)
	}
	f, ok := fileAt(c, "/etc/systemd/journald.conf.d/ansible-slurm-appliance.conf")
	if !ok || f.Mode != "0660" || !strings.Contains(f.Content, "[Journal]\nStorage=persistent\n") {
		t.Errorf("journald drop-in %+v", f)
	}
	if d, ok := fileAt(c, "/etc/systemd/journald.conf.d"); !ok || !d.Directory || d.Mode != "0770" {
		t.Errorf("journald.conf.d %+v", d)
	}
	if len(c.Tmpfiles) != 1 || c.Tmpfiles[0].Content != "d /var/log/journal 2755 root systemd-journal -" {
		t.Errorf("tmpfiles %+v", c.Tmpfiles)
	}
	if strings.Join(c.KernelArgs, " ") != "rd.auto=1" {
		t.Errorf("kernel_args %v", c.KernelArgs)
	}
	// the fat image has them all, once
	fat := mustGroups(t, []string{"fatimage", "raid"}, map[string]any{"kernel_args": []string{"rd.auto=1"}})
	if strings.Join(fat.KernelArgs, " ") != "rd.auto=1" || len(fat.ModprobeBlacklists) != 1 {
		t.Errorf("fatimage kernel_args %v, modprobe %+v", fat.KernelArgs, fat.ModprobeBlacklists)
	}
}

func TestGroupPodman(t *testing.T) {
	c := mustGroups(t, []string{"podman"}, nil)
	if len(c.Limits) != 1 || !strings.Contains(c.Limits[0].Content, "* hard memlock unlimited\n") || !strings.Contains(c.Limits[0].Content, "* soft nofile 65536\n") {
		t.Errorf("limits %+v", c.Limits)
	}
	if len(c.Sysctls) != 1 || c.Sysctls[0].Settings["kernel.keys.maxkeys"] != "50000" || c.Sysctls[0].Settings["kernel.keys.maxbytes"] != "25000000" {
		t.Errorf("sysctl %+v", c.Sysctls)
	}
	if f, ok := fileAt(c, "/etc/containers/containers.conf.d/50-cgroupfs.conf"); !ok || !strings.Contains(f.Content, "[engine]\ncgroup_manager = \"cgroupfs\"") {
		t.Errorf("containers.conf drop-in %+v", f)
	}
	if len(c.Tmpfiles) != 1 || !strings.Contains(c.Tmpfiles[0].Content, "R! /tmp/podman-run-*\n") {
		t.Errorf("tmpfiles %+v", c.Tmpfiles)
	}
	if !slices.ContainsFunc(c.users, func(u User) bool { return u.Name == "podman" && u.UID == 1001 }) {
		t.Errorf("users %+v", c.users)
	}
}

func TestGroupServicesFinalStates(t *testing.T) {
	c := mustGroups(t, []string{"fail2ban", "firewalld", "tuned", "sssd", "ansible_init"}, map[string]any{"python_index_url": "http://pypi.lab/simple", "python_index_insecure": true})
	if unitState(c, "fail2ban.service") != "enabled" || unitState(c, "ansible-init.service") != "enabled" {
		t.Errorf("units %+v", c.SystemdUnits)
	}
	for _, s := range []string{"firewalld", "tuned", "sssd"} {
		if !slices.Contains(c.disabledServices(), s) {
			t.Errorf("%s not left disabled: %v", s, c.disabledServices())
		}
	}
	if f, ok := fileAt(c, "/etc/fail2ban/jail.local"); !ok || !strings.Contains(f.Content, "[sshd]\nenabled = true\n") || !strings.Contains(f.Content, "bantime = 3600") {
		t.Errorf("jail.local %+v", f)
	}
	// without a site's appliance the ACCEPT zone is firewalld_configs_default's
	// rule, which is for openhpc hosts only
	if f, ok := fileAt(c, "/etc/firewalld/zones/public.xml"); ok {
		t.Errorf("public zone without openhpc: %+v, want the OS's (no file)", f)
	}
	c = mustGroups(t, []string{"firewalld", "openhpc"}, nil)
	if f, ok := fileAt(c, "/etc/firewalld/zones/public.xml"); !ok || !strings.Contains(f.Content, `<zone target="ACCEPT">`) {
		t.Errorf("public zone with openhpc %+v", f)
	}
	// a site disabling what a group enables is told, naming the unit
	_, err := prepareGroups(t, []string{"fail2ban"}, map[string]any{"disable_services": []string{"fail2ban"}})
	if err == nil || !strings.Contains(err.Error(), "fail2ban.service is left enabled by a group but disable_services") {
		t.Errorf("want the conflict, got %v", err)
	}
}

func TestGroupSSSDLDAP(t *testing.T) {
	if c := mustGroups(t, []string{"sssd"}, nil); slices.Contains(c.sets.Packages, "sssd-ldap") {
		t.Error("sssd-ldap without sssd_install_ldap")
	}
	c := mustGroups(t, []string{"sssd"}, map[string]any{"sssd_install_ldap": true})
	if !slices.Contains(c.sets.Packages, "sssd-ldap") || !slices.Contains(c.sets.Packages, "oddjob-mkhomedir") {
		t.Errorf("packages %v", c.sets.Packages)
	}
}

func TestGroupAnsibleInit(t *testing.T) {
	c := mustGroups(t, []string{"ansible_init"}, map[string]any{"python_index_url": "http://pypi.lab/simple", "python_index_insecure": true})
	if len(c.PythonEnvs) != 1 || c.PythonEnvs[0].Path != "/usr/lib/ansible-init" || c.PythonEnvs[0].IndexURL != "http://pypi.lab/simple" ||
		strings.Join(c.PythonEnvs[0].Requirements, " ") != "ansible==8.7.0 jmespath==1.0.1 requests==2.32.3 netaddr==1.3.0" {
		t.Errorf("python_envs %+v", c.PythonEnvs)
	}
	runner, ok := fileAt(c, "/usr/bin/ansible-init")
	if !ok || runner.Mode != "0755" || !strings.HasPrefix(runner.Content, "#!/usr/lib/ansible-init/bin/python\n") {
		t.Errorf("runner %+v", runner.Destination)
	}
	for _, d := range []string{"vars", "playbooks", "includes", "inventory"} {
		if f, ok := fileAt(c, "/etc/ansible-init/"+d); !ok || !f.Directory {
			t.Errorf("/etc/ansible-init/%s not made", d)
		}
	}
	cfg, _ := fileAt(c, "/etc/ansible-init/ansible.cfg")
	for _, l := range []string{"home = /var/lib/ansible-init", "local_tmp = /var/tmp/ansible-init", "inventory = /etc/ansible-init/inventory"} {
		if !strings.Contains(cfg.Content, l+"\n") {
			t.Errorf("ansible.cfg lacks %q", l)
		}
	}
	var unit system.SystemdUnit
	for _, u := range c.SystemdUnits {
		if u.Name == "ansible-init.service" {
			unit = u
		}
	}
	for _, l := range []string{"Type=oneshot", "RemainAfterExit=true", "After=network-online.target", "ConditionPathExists=!/var/lib/ansible-init.done",
		"Restart=on-failure", "RestartSec=10", "StandardOutput=journal+console", "WantedBy=multi-user.target default.target"} {
		if !strings.Contains(unit.Content, l+"\n") {
			t.Errorf("ansible-init.service lacks %q", l)
		}
	}
	// without python_index_url, PyPI
	if c := mustGroups(t, []string{"ansible_init"}, nil); c.PythonEnvs[0].IndexURL != "https://pypi.org/simple" {
		t.Errorf("default index %s", c.PythonEnvs[0].IndexURL)
	}
}

func TestGroupGatewayComputeInit(t *testing.T) {
	_, err := prepareGroups(t, []string{"gateway"}, nil)
	if err == nil || !strings.Contains(err.Error(), `group "gateway": appliance_dir is required`) {
		t.Errorf("want appliance_dir required, got %v", err)
	}
	c := mustGroups(t, []string{"ansible_init", "gateway", "compute_init"}, map[string]any{"appliance_dir": applianceDir})
	gw, ok := fileAt(c, "/etc/ansible-init/playbooks/05-gateway-init.yml")
	if !ok || gw.Source != applianceDir+"/ansible/roles/gateway/files/gateway-init.yml" {
		t.Errorf("gateway playbook %+v", gw)
	}
	for dst, src := range map[string]string{
		"/etc/ansible-init/playbooks/10-compute-init.yml":                "/ansible/roles/compute_init/files/compute-init.yml",
		"/etc/ansible-init/playbooks/roles/mrlesmithjr.chrony":           "/ansible/roles/mrlesmithjr.chrony",
		"/etc/ansible-init/playbooks/tasks/tuned.yml":                    "/ansible/roles/tuned/tasks/configure.yml",
		"/etc/ansible-init/playbooks/templates/ceph.keyring.j2":          "/ansible/roles/stackhpc.os-manila-mount/templates/ceph.keyring.j2",
		"/etc/ansible-init/playbooks/files/NetworkManager-dns-none.conf": "/ansible/roles/resolv_conf/files/NetworkManager-dns-none.conf",
	} {
		if f, ok := fileAt(c, dst); !ok || f.Source != applianceDir+src {
			t.Errorf("%s: %+v", dst, f)
		}
	}
	// ansible_init's directories come before compute_init's inside them
	if i, j := slices.IndexFunc(c.Files, func(f files.File) bool { return f.Destination == "/etc/ansible-init/playbooks" }),
		slices.IndexFunc(c.Files, func(f files.File) bool { return f.Destination == "/etc/ansible-init/playbooks/roles" }); i < 0 || j < i {
		t.Errorf("order: playbooks at %d, playbooks/roles at %d", i, j)
	}
	// a checkout lacking a file: the group and the path are named
	empty := t.TempDir()
	_, err = prepareGroups(t, []string{"gateway"}, map[string]any{"appliance_dir": empty})
	want := fmt.Sprintf(`group "gateway": files[0]: source: stat %s/ansible/roles/gateway/files/gateway-init.yml: no such file or directory`, empty)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("want %q, got %v", want, err)
	}
}

func TestGroupOpenOnDemandApps(t *testing.T) {
	c := mustGroups(t, []string{"openondemand"}, map[string]any{"git_base_url": "http://git.lab/"})
	want := map[string]string{
		"/var/www/ood/apps/sys/jupyter":    "http://git.lab/OSC/bc_example_jupyter.git@master",
		"/var/www/ood/apps/sys/rstudio":    "http://git.lab/stackhpc/ood-stackhpc-rstudio.git@2025.08.1",
		"/var/www/ood/apps/sys/codeserver": "http://git.lab/stackhpc/bc_osc_codeserver.git@2025.09.1",
	}
	if len(c.GitCheckouts) != len(want) {
		t.Fatalf("git_checkouts %+v", c.GitCheckouts)
	}
	for _, g := range c.GitCheckouts {
		if want[g.Destination] != g.Repo+"@"+g.Ref() {
			t.Errorf("%s: %s@%s", g.Destination, g.Repo, g.Ref())
		}
	}
	// the default is GitHub
	if c := mustGroups(t, []string{"openondemand"}, nil); !strings.HasPrefix(c.GitCheckouts[0].Repo, "https://github.com/") {
		t.Errorf("default repo %s", c.GitCheckouts[0].Repo)
	}
}

// The merge rule: a template entry replaces a group's of the same
// identity; the same entry is kept once; a path claimed by another kind
// is refused naming both.
func TestGroupContentMerge(t *testing.T) {
	c := mustGroups(t, []string{"openondemand", "raid"}, map[string]any{
		"git_base_url":  "http://git.lab",
		"git_checkouts": []map[string]any{{"repo": "http://mirror/rstudio.git", "tag": "2026.01.1", "destination": "/var/www/ood/apps/sys/rstudio"}},
		"kernel_args":   []string{"rd.auto=1", "quiet"},
	})
	var rstudio []git.GitCheckout
	for _, g := range c.GitCheckouts {
		if g.Destination == "/var/www/ood/apps/sys/rstudio" {
			rstudio = append(rstudio, g)
		}
	}
	if len(c.GitCheckouts) != 3 || len(rstudio) != 1 || rstudio[0].Tag != "2026.01.1" {
		t.Errorf("git_checkouts %+v", c.GitCheckouts)
	}
	if strings.Join(c.KernelArgs, " ") != "rd.auto=1 quiet" {
		t.Errorf("kernel_args %v", c.KernelArgs)
	}
	src := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(src, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := prepareGroups(t, []string{"openondemand"}, map[string]any{
		"files": []map[string]any{{"source": src, "destination": "/var/www/ood/apps/sys/jupyter"}},
	})
	if err == nil || !strings.Contains(err.Error(), `group "openondemand"'s git_checkouts and the template's files both write /var/www/ood/apps/sys/jupyter`) {
		t.Errorf("want the path conflict, got %v", err)
	}
	// two groups writing one identity differently
	var errs []error
	got, _ := mergeEntries("sysctl", []owned[system.Sysctl]{
		{origin{group: "a"}, system.Sysctl{Name: "90-x", Settings: map[string]string{"k": "1"}}},
		{origin{group: "b"}, system.Sysctl{Name: "90-x", Settings: map[string]string{"k": "2"}}},
		{origin{group: "c"}, system.Sysctl{Name: "90-y", Settings: map[string]string{"k": "1"}}},
		{origin{group: "d"}, system.Sysctl{Name: "90-y", Settings: map[string]string{"k": "1"}}},
	}, nil, func(s system.Sysctl) string { return s.Name }, &errs)
	if len(got) != 2 || len(errs) != 1 || errs[0].Error() != `groups "a" and "b" both set sysctl 90-x, differently; set it in the template to choose` {
		t.Errorf("merged %+v, errors %v", got, errors.Join(errs...))
	}
}

func TestGroupVendorRepos(t *testing.T) {
	for group, repo := range map[string]string{"doca": "doca", "cuda": "cuda", "lustre": "lustre", "slurm_recompile": "slurm_recompile"} {
		_, err := prepareGroups(t, []string{group}, nil)
		want := fmt.Sprintf("group %q needs the vendor repository %q (", group, repo)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), fmt.Sprintf("add a repos entry with repo_name = %q", repo)) {
			t.Errorf("%s: want %q, got %v", group, want, err)
		}
		repos := []map[string]string{{"name": repo, "repo_file": repo, "repo_name": repo, "baseurl": "https://vendor.example/el9/", "gpgcheck": "false"}}
		if _, err := prepareGroups(t, []string{group}, map[string]any{"repos": repos}); err != nil {
			t.Errorf("%s with its repository: %v", group, err)
		}
		// enable_repos names a section of the image's own files
		if _, err := prepareGroups(t, []string{group}, map[string]any{"enable_repos": []string{repo}}); err != nil {
			t.Errorf("%s with enable_repos: %v", group, err)
		}
	}
	c := mustGroups(t, []string{"cuda"}, map[string]any{"enable_repos": []string{"cuda"}})
	if unitState(c, "nvidia-persistenced.service") != "enabled" || !slices.Contains(c.sets.Modules, "nvidia-driver:610-open") || !slices.Contains(c.sets.Packages, "cuda-toolkit-13.3.1-1") {
		t.Errorf("cuda: units %+v modules %v packages %v", c.SystemdUnits, c.sets.Modules, c.sets.Packages)
	}
}

// A typo in groups still gets its "did you mean".
func TestGroupTypoStillSuggests(t *testing.T) {
	_, err := prepareGroups(t, []string{"kernel_module"}, nil)
	if err == nil || !strings.Contains(err.Error(), `groups[0]: unknown group "kernel_module": did you mean "kernel_modules"?`) {
		t.Errorf("got %v", err)
	}
}

// slurm_exporter installs the appliance's RPM by URL, unsigned and
// unchecksummed as there; a template entry for the same file replaces it.
func TestGroupSlurmExporter(t *testing.T) {
	c := mustGroups(t, []string{"slurm_exporter"}, map[string]any{"github_releases_url": "http://releases.lab/"})
	const file = "/stackhpc/prometheus-slurm-exporter/releases/download/0.22/prometheus-slurm-exporter-0.22-1.el8.x86_64.rpm"
	if len(c.RPMURLs) != 1 || c.RPMURLs[0].URL != "http://releases.lab"+file || !c.RPMURLs[0].InsecureSkipChecksum || !c.RPMURLs[0].DisableGPGCheck {
		t.Errorf("rpm_urls %+v", c.RPMURLs)
	}
	if !slices.Contains(c.disabledServices(), "prometheus-slurm-exporter") {
		t.Errorf("services %v", c.disabledServices())
	}
	sum := strings.Repeat("a", 64)
	c = mustGroups(t, []string{"slurm_exporter"}, map[string]any{
		"rpm_urls": []map[string]any{{"url": "https://mirror.example" + file, "sha256": sum, "disable_gpg_check": true}},
	})
	if len(c.RPMURLs) != 1 || c.RPMURLs[0].SHA256 != sum || c.RPMURLs[0].InsecureSkipChecksum {
		t.Errorf("the template's pinned entry does not replace the group's: %+v", c.RPMURLs)
	}
	if c := mustGroups(t, []string{"slurm_exporter"}, nil); !strings.HasPrefix(c.RPMURLs[0].URL, "https://github.com/stackhpc/") {
		t.Errorf("default %s", c.RPMURLs[0].URL)
	}
}

// mysql, opensearch and filebeat pull the appliance's images into the
// podman user's storage, each from its own registry or the mirror.
func TestGroupContainers(t *testing.T) {
	c := mustGroups(t, []string{"mysql", "opensearch", "filebeat"}, nil)
	var got []string
	for _, ct := range c.Containers {
		got = append(got, ct.UserOrRoot()+" "+ct.Image)
	}
	if strings.Join(got, ", ") != "podman docker.io/library/mysql:8.0.30, podman docker.io/opensearchproject/opensearch:2.9.0, podman docker.elastic.co/beats/filebeat-oss:7.12.1" {
		t.Errorf("containers %v", got)
	}
	if len(c.Sysctls) != 1 || c.Sysctls[0].Settings["vm.max_map_count"] != "262144" || !slices.ContainsFunc(c.users, func(u User) bool { return u.Name == "podman" }) {
		t.Errorf("sysctl %+v users %+v", c.Sysctls, c.users)
	}
	c = mustGroups(t, []string{"filebeat"}, map[string]any{"container_registry": "registry.lab:5000"})
	if len(c.Containers) != 1 || c.Containers[0].Image != "registry.lab:5000/beats/filebeat-oss:7.12.1" {
		t.Errorf("mirror %+v", c.Containers)
	}
}
