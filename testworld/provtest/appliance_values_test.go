package provtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/provisioner/fatimage"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
)

// applianceImage is the part of image.json recording where the groups'
// values came from.
type applianceImage struct {
	Appliance struct {
		Values        string  `json:"values"`
		Environment   string  `json:"environment"`
		Resolved      float64 `json:"resolved_seconds"`
		FromAppliance []struct {
			Group, Variable string
			Values          []string
		} `json:"from_appliance"`
	} `json:"appliance"`
	InventoryGroups []string `json:"inventory_groups"`
}

// applianceBuild provisions a lab VM with the site's appliance checkout
// and environment env (testworld/appliancesite), the build in the
// inventory groups below, as Packer's ansible provisioner would reach
// the VM; it returns the VM's communicator and the build output.
// groupVars, if any, are more of the site's group_vars (all), in a file
// of their own in env (a copied environment: not .stackhpc).
func applianceBuild(t *testing.T, env, groupVars string) (packersdk.Communicator, string) {
	ctx, srv, comm := labVM(t, "appliance-values", 25*time.Minute)
	clearArkEnv(t)
	t.Setenv("ARK_USERNAME", theLab.Env["ARK_USERNAME"])
	t.Setenv("ARK_PASSWORD", theLab.Env["ARK_PASSWORD"])
	// the overrides environment's dnf_repos_extra reads it, as a site's
	// group_vars would name its Pulp
	t.Setenv("ARK_CONTENT_URL", theLab.Env["ARK_CONTENT_URL"])
	site := appliancesite.New(t, env)
	if groupVars != "" {
		if err := os.WriteFile(filepath.Join(site.Environment, "inventory", "group_vars", "all", "zz-test.yml"), []byte(groupVars), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw := map[string]any{
		"appliance_dir": site.Repo, "appliance_environment": site.Environment,
		"appliance_roles_path": site.RolesPath, "appliance_collections_path": site.CollectionsPath,
		"inventory_groups": "extra_packages,openhpc,openondemand,grafana,kernel_modules,selinux",
		"repos":            labRepos(t),
		"gpg_keys": []any{map[string]any{
			"path": "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9", "key": string(theLab.Repos.GPGKeyFiles["RPM-GPG-KEY-Rocky-9"]),
		}},
		"binaries": labBinaries(), "release_base_url": theLab.Env["LAB_RELEASES_URL"],
		"git_base_url": theLab.Env["LAB_GIT_URL"], "github_releases_url": theLab.Releases.URL(),
		"python_index_url": theLab.Env["LAB_PYPI_URL"], "python_index_insecure": true,
		"grafana_dashboards_url": theLab.Env["LAB_GRAFANA_URL"],
		"skip_cleanup_steps":     []string{"ssh-host-keys", "login-ssh-keys", "resolv-conf"},
	}
	var p fatimage.Provisioner
	if err := p.Prepare(raw); err != nil {
		t.Fatal(err)
	}
	var out logtail.Buffer
	generated := map[string]any{"Host": srv.IP, "Port": 22, "User": lab.SSHUser, "SSHPrivateKey": string(srv.PrivateKey), "ConnType": "ssh"}
	start := time.Now()
	if err := p.Provision(ctx, &packersdk.BasicUi{Writer: &out, ErrorWriter: &out}, comm, generated); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("provisioned with environment %s in %s", env, time.Since(start).Round(time.Second))
	return comm, out.String()
}

// readApplianceImage reads the VM's image.json.
func readApplianceImage(t *testing.T, comm packersdk.Communicator) applianceImage {
	var img applianceImage
	if err := json.Unmarshal([]byte(run(t, comm, "cat /var/lib/image/image.json")), &img); err != nil {
		t.Fatal(err)
	}
	return img
}

// rpmVersion is an installed package's version, or "" when it is not.
func rpmVersion(t *testing.T, comm packersdk.Communicator, name string) string {
	out := run(t, comm, "rpm -q --qf '%{VERSION}\\n' "+name+" 2>/dev/null || true")
	if strings.Contains(out, "not installed") {
		return ""
	}
	return out
}

// TestApplianceValuesLab: with the site's appliance, every override of
// the site's environment (testworld/appliancesite/overrides, on top of
// the appliance's .stackhpc) reaches the image through the appliance
// variable the built-in group names; the build says which checkout and
// environment it read, and image.json records each value's variable.
func TestApplianceValuesLab(t *testing.T) {
	// SELinux for a host in the appliance's selinux group (bootstrap.yml's
	// play), over the common default disabled; not in the overrides
	// environment, which TestApplianceOwnBuild builds too (a mode the lab
	// VM does not run would make the appliance's own build reboot)
	comm, out := applianceBuild(t, appliancesite.Overrides, "selinux_state: permissive\n")
	if !strings.Contains(out, "environment overrides:") || !strings.Contains(out, "resolved on the build VM in") {
		t.Errorf("the build does not say what it read and how long it took:\n%s", out)
	}
	for name, want := range map[string]string{
		"fatimage-site-extra": "1.0",      // appliances_extra_packages_other, from dnf_repos_extra's repository
		"slurm-sview-ohpc":    "23.11.10", // openhpc_packages_extra
		"ondemand":            "4.1.5",    // ondemand_package_version
		"grafana":             "10.4.19",  // grafana_version
		"mod_auth_openidc":    "2.4.10",   // openondemand_auth: oidc
		"ondemand-dex":        "2.36.0",   // .stackhpc's builder install_ondemand_dex
	} {
		if got := rpmVersion(t, comm, name); got != want {
			t.Errorf("%s: version %q, want %q", name, got, want)
		}
	}
	if uid := run(t, comm, "id -u sitebot"); uid != "1234" {
		t.Errorf("appliances_local_users_extra's sitebot: uid %q, want 1234", uid)
	}
	// the common defaults' grafana entry: its group made on its own, the
	// user's primary group the user module's useradd -N gives
	if got := run(t, comm, "id -u grafana; id -gn grafana; getent group grafana | cut -d: -f3"); got != "984\nusers\n979" {
		t.Errorf("appliances_local_users' grafana: %q, want uid 984, primary group users, group grafana 979", got)
	}
	deny := run(t, comm, "cat /etc/modprobe.d/appliance.conf")
	if !strings.Contains(deny, "sctp") || !strings.Contains(deny, "dccp") || strings.Contains(deny, "esp4") {
		t.Errorf("kernel_modules_denylist: /etc/modprobe.d/appliance.conf is\n%s\nwant sctp and dccp (dccp templated from the VM's major), not the default esp4", deny)
	}
	// node_exporter_enabled_collectors and _disabled_collectors
	if got, want := run(t, comm, "grep ^ExecStart= /etc/systemd/system/node_exporter.service"),
		"ExecStart=/usr/local/bin/node_exporter --collector.systemd --collector.processes --collector.textfile --collector.textfile.directory=/var/lib/node_exporter "+
			"--no-collector.mdadm --web.listen-address=0.0.0.0:9100 --web.telemetry-path=/metrics"; got != want {
		t.Errorf("node_exporter's unit: %q, want %q", got, want)
	}
	// selinux_state, for a host in selinux (the plugin's own default is
	// disabled); the common selinux_policy
	if got := run(t, comm, "sudo -n sed -n 's/^SELINUX\\(TYPE\\)*=//p' /etc/selinux/config"); got != "permissive\ntargeted" {
		t.Errorf("/etc/selinux/config's SELINUX and SELINUXTYPE: %q, want the site's permissive and targeted", got)
	}
	if !strings.Contains(out, "SELinux permissive, policy targeted (the site's selinux_state)") {
		t.Errorf("the build does not say SELinux is the site's:\n%s", out)
	}
	img := readApplianceImage(t, comm)
	if img.Appliance.Values != "site" || filepath.Base(img.Appliance.Environment) != appliancesite.Overrides || img.Appliance.Resolved <= 0 {
		t.Errorf("image.json appliance: %+v", img.Appliance)
	}
	vars := map[string]bool{}
	for _, v := range img.Appliance.FromAppliance {
		vars[v.Variable] = true
	}
	if repo := run(t, comm, "sudo -n cat /etc/yum.repos.d/site-extra.repo"); !strings.Contains(repo, "[siteextra]") || !strings.Contains(repo, "site/extra/el9/x86_64/20251106T211545") || !strings.Contains(repo, "enabled = 0") && !strings.Contains(repo, "enabled=0") {
		t.Errorf("dnf_repos_extra's repository is not in the image, disabled:\n%s", repo)
	}
	for _, v := range []string{"appliances_extra_packages", "openhpc_packages", "ondemand_package", "grafana_version", "kernel_modules_denylist", "dnf_repos_extra", "node_exporter_version", "openondemand_install_app_rstudio",
		"node_exporter_enabled_collectors", "additional_rpm_installs", "selinux_state", "selinux_policy"} {
		if !vars[v] {
			t.Errorf("image.json does not record %s: %+v", v, img.Appliance.FromAppliance)
		}
	}
	if !slices.Contains(img.InventoryGroups, "eessi") || !slices.Contains(img.InventoryGroups, "builder") {
		t.Errorf("the host's groups are not the site's Ansible's: %v", img.InventoryGroups)
	}
}

// TestApplianceStockValuesLab: with the appliance's own .stackhpc
// environment the image carries the checkout's values, those the
// contract test checks (the pins of f49fc24), and none of the site's.
func TestApplianceStockValuesLab(t *testing.T) {
	comm, out := applianceBuild(t, ".stackhpc", "")
	// .stackhpc sets the three apps' partitions: its ood_install_apps
	// names them, the conditions hold on the VM, and no app is left out
	if got := run(t, comm, "ls /var/www/ood/apps/sys"); !strings.Contains(got, "codeserver") || !strings.Contains(got, "jupyter") || !strings.Contains(got, "rstudio") {
		t.Errorf("apps: %q", got)
	}
	if strings.Contains(out, "ood_install_apps names") {
		t.Errorf("an app of .stackhpc's is not installed:\n%s", out)
	}
	for name, want := range map[string]string{
		"ondemand": "4.1.4", "grafana": "10.4.18", "fatimage-site-extra": "", "slurm-sview-ohpc": "", "htop": "3.3.0",
		// .stackhpc's builder group_vars: oidc_uri and install_ondemand_dex
		"mod_auth_openidc": "2.4.10", "ondemand-dex": "2.36.0",
	} {
		if got := rpmVersion(t, comm, name); got != want {
			t.Errorf("%s: version %q, want %q", name, got, want)
		}
	}
	if out := run(t, comm, "id -u sitebot 2>&1 || true"); !strings.Contains(out, "no such user") {
		t.Errorf("sitebot exists: %s", out)
	}
	deny := run(t, comm, "cat /etc/modprobe.d/appliance.conf")
	for _, m := range []string{"esp4", "esp6", "rxrpc", "ip6_tunnel", "act_pedit", "openvswitch"} {
		if !strings.Contains(deny, m) {
			t.Errorf("/etc/modprobe.d/appliance.conf lacks %s:\n%s", m, deny)
		}
	}
	if img := readApplianceImage(t, comm); img.Appliance.Values != "site" || filepath.Base(img.Appliance.Environment) != ".stackhpc" {
		t.Errorf("image.json appliance: %+v", img.Appliance)
	}
}
