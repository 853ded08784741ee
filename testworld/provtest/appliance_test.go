package provtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// siteVars are the variables the appliance-engine tests resolve: values a
// site overrides (testworld/appliancesite/overrides) and facts.
var siteVars = []string{
	"appliances_extra_packages", "appliances_extra_packages_default", "appliances_extra_packages_other",
	"openhpc_packages_extra", "appliances_local_users_extra", "ondemand_package_version",
	"grafana_version", "openondemand_auth", "kernel_modules_denylist",
	"ansible_distribution", "ansible_distribution_version", "ansible_distribution_major_version",
	"no_such_variable_anywhere", "alertmanager_web_config",
}

func applianceTarget(srv *labtest.Server) appliance.Target {
	return appliance.Target{Host: srv.IP, Port: 22, User: lab.SSHUser, PrivateKey: srv.PrivateKey}
}

// checkoutValue is a variable's value as the checkout's group_vars/all
// files write it (the last of common, site, .stackhpc), read as YAML.
func checkoutValue(t *testing.T, repo, name string) any {
	t.Helper()
	var val any
	found := false
	for _, env := range []string{"common", "site", ".stackhpc"} {
		files, _ := filepath.Glob(filepath.Join(repo, "environments", env, "inventory", "group_vars", "all", "*.yml"))
		for _, f := range files {
			var vars map[string]any
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(data, &vars); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if v, ok := vars[name]; ok {
				val, found = v, true
			}
		}
	}
	if !found {
		t.Fatalf("%s: not in the checkout's group_vars/all", name)
	}
	return val
}

// roleDefault is a variable's value in a role's defaults/main.yml.
func roleDefault(t *testing.T, dir, name string) any {
	t.Helper()
	var vars map[string]any
	data, err := os.ReadFile(filepath.Join(dir, "defaults", "main.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &vars); err != nil {
		t.Fatal(err)
	}
	v, ok := vars[name]
	if !ok {
		t.Fatalf("%s: not in %s's defaults", name, dir)
	}
	return v
}

func resolveSite(ctx context.Context, t *testing.T, s *appliance.Site, tg appliance.Target, req appliance.Request) *appliance.Result {
	t.Helper()
	var log bytes.Buffer
	res, err := s.Resolve(ctx, tg, req, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	t.Log(res.Summary())
	if res.Environment != s.Environment || res.Duration <= 0 || res.Commit != "" || !strings.Contains(res.CommitError, "not a git work tree") {
		t.Errorf("result: environment %q, duration %s, commit %q (%s)", res.Environment, res.Duration, res.Commit, res.CommitError)
	}
	return res
}

// jsonish makes YAML-read values comparable with the JSON ansible wrote.
func jsonish(v any) string { return fmt.Sprintf("%v", v) }

func wantValue(t *testing.T, vals map[string]appliance.Value, name string, want any) {
	t.Helper()
	got, ok := vals[name]
	switch {
	case !ok || !got.Defined || got.Error != "":
		t.Errorf("%s: %+v, want %v", name, got, want)
	case jsonish(got.Value) != jsonish(want):
		t.Errorf("%s = %v, want %v", name, got.Value, want)
	}
}

// TestApplianceResolveLab resolves the site's variables on a lab VM with
// the site's Ansible: the appliance's .stackhpc environment gives the
// checkout's own values, and a site environment on top of it gives its
// overrides; the VM's facts decide the templated ones.
func TestApplianceResolveLab(t *testing.T) {
	ctx, srv, _ := labVM(t, "appliance-resolve", 5*time.Minute)
	tg := applianceTarget(srv)
	req := appliance.Request{Queries: []appliance.Query{
		{Vars: append(siteVars, "openondemand_oidc_remote_user_claim", "node_exporter_version", "node_exporter_checksum", "prometheus_checksum", "alertmanager_checksum", "grafana_plugins", "ansible_user",
			"ansible_init_pip_packages", "grafana_dashboards", "firewalld_configs"), Conditions: []string{"firewalld_configs | length > 0"}},
		{Role: "mrlesmithjr.chrony", Vars: []string{"chrony_ntp_servers", "chrony_allow_hosts", "chrony_log"}, Conditions: []string{"chrony_rtcsync_enabled | bool"},
			Texts: []string{"chrony_dumpdir", "chrony_local_stratum", "chrony_logdir", "chrony_maxupdateskew"}},
		{Role: "hpctests", Vars: []string{"hpctests_hpl_version"}},
		{Role: "openondemand", Vars: []string{"openondemand_oidc_remote_user_claim", "openondemand_auth", "openondemand_rstudio_version", "openondemand_code_server_version"}},
		{Role: "stackhpc.openhpc", Vars: []string{"openhpc_job_maxtime", "openhpc_packages_extra"}},
		{Role: "eessi", Vars: []string{"cvmfs_config"}},
		{Role: "podman", Vars: []string{"podman_users"}},
		{Role: "mysql", Vars: []string{"mysql_podman_user", "mysql_datadir"}},
		{Role: "opensearch", Vars: []string{"opensearch_podman_user", "opensearch_data_path", "opensearch_config_path"}},
		{Role: "slurm_exporter", Vars: []string{"slurm_exporter_version", "slurm_exporter_release"}},
		{Role: "opkssh", Vars: []string{"opkssh_install_version"}},
		{Role: "journald", Vars: []string{"journald_storage"}, Conditions: []string{`journald_storage == "persistent"`}},
		{Role: "stackhpc.os-manila-mount", Vars: []string{"os_manila_mount_ceph_version"}},
		{Role: "stackhpc.linux.vgpu", Vars: []string{"vgpu_nvidia_mig_manager_rpm_url"}},
		{Role: "filebeat", Vars: []string{"filebeat_podman_user"}},
		{Role: "k3s", Vars: []string{"k3s_version", "k3s_helm_version", "k3s_selinux_release", "k3s_selinux_rpm_version"}},
		{Role: "sssd", Vars: []string{"sssd_ldap_packages"}, Conditions: []string{"sssd_install_ldap | bool"}},
		{Role: "prometheus.prometheus.node_exporter", Vars: []string{"node_exporter_enabled_collectors", "node_exporter_disabled_collectors",
			"node_exporter_web_listen_address", "node_exporter_web_telemetry_path", "node_exporter_textfile_dir",
			"node_exporter_system_user", "node_exporter_system_group", "node_exporter_config_dir"}},
		{Role: "osc.ood", Vars: []string{"additional_rpm_installs", "nodejs_version"},
			VarsFiles: []string{"{{ ansible_distribution }}/{{ ansible_distribution_major_version }}.yml", "{{ ansible_distribution }}.yml"}},
	}, Tasks: []appliance.TaskRef{{Role: "openondemand", File: "vnc_compute.yml"}}}
	podmanUser := func(res *appliance.Result, want string) {
		t.Helper()
		for _, role := range []string{"mysql", "opensearch", "filebeat"} {
			wantValue(t, res.Values[role], role+"_podman_user", want)
		}
	}

	stock := appliancesite.New(t, ".stackhpc", "fatimage")
	res := resolveSite(ctx, t, stock, tg, req)
	vals := res.Values[""]
	if d, v := vals["ansible_distribution"], vals["ansible_distribution_version"]; d.Value != "Rocky" || v.Value != "9.6" {
		t.Fatalf("facts: distribution %v %v, want the lab VM's Rocky 9.6", d.Value, v.Value)
	}
	for _, name := range []string{"appliances_extra_packages_other", "openhpc_packages_extra", "appliances_local_users_extra",
		"ondemand_package_version", "grafana_version", "openondemand_auth", "kernel_modules_denylist",
		"node_exporter_version", "node_exporter_checksum", "prometheus_checksum", "alertmanager_checksum", "grafana_plugins"} {
		wantValue(t, vals, name, checkoutValue(t, stock.Repo, name))
	}
	// The checkout's default list, with its element templated from the
	// VM's facts (python312 unless the VM is 8.9).
	var want []any
	for _, p := range checkoutValue(t, stock.Repo, "appliances_extra_packages_default").([]any) {
		if strings.Contains(p.(string), "{{") {
			p = "python312"
		}
		want = append(want, p)
	}
	wantValue(t, vals, "appliances_extra_packages", want)
	if v := vals["no_such_variable_anywhere"]; v.Defined {
		t.Errorf("undefined variable: %+v", v)
	}
	if v := vals["alertmanager_web_config"]; !v.Defined || !strings.Contains(v.Error, "vault_alertmanager_admin_password") {
		t.Errorf("a value needing a cluster's secret: %+v, want Ansible's error naming the variable", v)
	}
	// Role defaults are in scope in their role's scope only.
	if v := vals["openondemand_oidc_remote_user_claim"]; v.Defined {
		t.Errorf("a role default outside its role: %+v", v)
	}
	roles := filepath.Join(stock.Repo, "ansible", "roles")
	wantValue(t, res.Values["openondemand"], "openondemand_oidc_remote_user_claim",
		roleDefault(t, filepath.Join(roles, "openondemand"), "openondemand_oidc_remote_user_claim"))
	wantValue(t, res.Values["openondemand"], "openondemand_auth", checkoutValue(t, stock.Repo, "openondemand_auth"))
	for _, name := range []string{"openondemand_rstudio_version", "openondemand_code_server_version"} {
		wantValue(t, res.Values["openondemand"], name, roleDefault(t, filepath.Join(roles, "openondemand"), name))
	}
	for _, name := range []string{"k3s_version", "k3s_helm_version", "k3s_selinux_release", "k3s_selinux_rpm_version"} {
		wantValue(t, res.Values["k3s"], name, roleDefault(t, filepath.Join(roles, "k3s"), name))
	}
	wantValue(t, res.Values["stackhpc.openhpc"], "openhpc_job_maxtime",
		roleDefault(t, filepath.Join(appliancesite.Dir(), "galaxy", "roles", "stackhpc.openhpc"), "openhpc_job_maxtime"))
	wantValue(t, res.Values["slurm_exporter"], "slurm_exporter_version", roleDefault(t, filepath.Join(roles, "slurm_exporter"), "slurm_exporter_version"))
	wantValue(t, res.Values["slurm_exporter"], "slurm_exporter_release", roleDefault(t, filepath.Join(roles, "slurm_exporter"), "slurm_exporter_release"))
	wantValue(t, res.Values["opkssh"], "opkssh_install_version", roleDefault(t, filepath.Join(roles, "opkssh"), "opkssh_install_version"))
	// the role's default, templated from the VM's facts (Rocky 9)
	minVersions := roleDefault(t, filepath.Join(appliancesite.Dir(), "galaxy", "roles", "stackhpc.os-manila-mount"), "os_manila_mount_ceph_min_versions")
	wantValue(t, res.Values["stackhpc.os-manila-mount"], "os_manila_mount_ceph_version", minVersions.(map[string]any)["Rocky"].(map[string]any)["9"])
	wantValue(t, res.Values["journald"], "journald_storage", roleDefault(t, filepath.Join(roles, "journald"), "journald_storage"))
	if got := res.RoleConditions["journald"][`journald_storage == "persistent"`]; !got.Holds || got.Error != "" {
		t.Errorf("journald_storage == persistent, stock: %+v, want it to hold", got)
	}
	wantValue(t, res.Values["stackhpc.linux.vgpu"], "vgpu_nvidia_mig_manager_rpm_url", roleDefault(t,
		filepath.Join(appliancesite.Dir(), "galaxy", "collections", "ansible_collections", "stackhpc", "linux", "roles", "vgpu"), "vgpu_nvidia_mig_manager_rpm_url"))
	// the common group_vars' paths, without appliances_state_dir at build
	wantValue(t, res.Values["mysql"], "mysql_datadir", "/var/lib/mysql")
	wantValue(t, res.Values["opensearch"], "opensearch_data_path", "/usr/share/opensearch/data")
	wantValue(t, res.Values["opensearch"], "opensearch_config_path", "/usr/share/opensearch/config")
	if !slices.Contains(res.Groups, "openondemand") || !slices.Contains(res.Groups, "builder") || slices.Contains(res.Groups, "doca") {
		t.Errorf("groups of a fatimage build: %v", res.Groups)
	}
	// The builder is in squid: the common group_vars make its own address
	// the cvmfs proxy (which the plugin leaves out), keys in the role's
	// order; the podman user is appliances_local_users_podman.
	wantCvmfs(t, res, []string{"CVMFS_QUOTA_LIMIT", "CVMFS_HTTP_PROXY"}, "10000", "'http://"+srv.IP+":3128'")
	wantValue(t, res.Values["podman"], "podman_users",
		[]any{map[string]any{"name": "podman", "comment": "Used for running all containers", "home": "/var/lib/podman", "uid": "1001"}})
	// the common group_vars' podman over the roles' default, the login user
	podmanUser(res, "podman")
	// the roles' default, {{ ansible_user }}, is the user the site's
	// Ansible logs in as (which the plan accepts as a podman user)
	wantValue(t, vals, "ansible_user", lab.SSHUser)
	// sssd-ldap: the role's list, wanted by .stackhpc's builder group_vars
	// over the role's default false
	wantValue(t, res.Values["sssd"], "sssd_ldap_packages", roleDefault(t, filepath.Join(roles, "sssd"), "sssd_ldap_packages"))
	if got := res.RoleConditions["sssd"]["sssd_install_ldap | bool"]; !got.Holds || got.Error != "" {
		t.Errorf("sssd_install_ldap for .stackhpc's builder: %+v, want it to hold", got)
	}

	// the role's defaults and the common group_vars' list give the
	// plugin's built-in chrony.conf, HPL 2.3 and ansible-init's pins
	wantGroupAsBuiltIn(t, res, "chrony", "hpctests", "ansible_init", "node_exporter", "firewalld")
	if builtin, out := withResolved(t, res, "openondemand_desktop"); !slices.Equal(out.Packages, builtin.Packages) {
		t.Errorf("the desktop's packages from the checkout's vnc_compute.yml: %v, want the built-in %v", out.Packages, builtin.Packages)
	}
	wantStockDashboards(t, res)
	// osc.ood's vars for Rocky 9 with its defaults' streams
	wantValue(t, res.Values["osc.ood"], "additional_rpm_installs", []any{"lua-posix", "@nodejs:22", "@ruby:3.3"})
	wantValue(t, res.Values["osc.ood"], "nodejs_version", 22)

	site := appliancesite.New(t, appliancesite.Overrides, "fatimage")
	// a site's own cvmfs settings, podman users and the user running its
	// containers, in a file of its own (the overrides environment's
	// values are other tests' too)
	own := "cvmfs_config_overrides:\n  CVMFS_QUOTA_LIMIT: 20000\n  CVMFS_USE_GEOAPI: \"yes\"\n" +
		"podman_users:\n  - {name: podman, uid: 1001, home: /var/lib/podman}\n  - {name: containers, uid: 1500, home: /srv/containers}\n" +
		"mysql_podman_user: containers\nopensearch_podman_user: containers\nfilebeat_podman_user: containers\n" +
		"node_exporter_version: 1.12.0\nnode_exporter_checksum: " + strings.Repeat("ab", 32) + "\n" +
		"openondemand_code_server_version: 4.103.0\n" +
		"slurm_exporter_version: \"0.23\"\nslurm_exporter_release: \"2\"\nopkssh_install_version: v0.14.0\nos_manila_mount_ceph_version: 19.2.3\n" +
		"journald_storage: volatile\n" +
		"vgpu_nvidia_mig_manager_rpm_url: https://mirror.site.example/mig/nvidia-mig-manager-0.13.0-1.x86_64.rpm\n" +
		"appliances_state_dir: /var/lib/state\n" +
		"chrony_ntp_servers:\n  - {server: ntp.site.example, type: pool, options: [{option: iburst}, {option: maxsources, val: 3}]}\n  - {server: 10.0.0.1}\n" +
		"chrony_allow_hosts: [10.60.0.0/16]\nchrony_dumpdir: /srv/chrony\nchrony_log: [tracking, rtc]\nchrony_maxupdateskew: 5.0\nchrony_rtcsync_enabled: false\n" +
		"hpctests_hpl_version: \"2.4\"\nansible_init_pip_packages: [ansible, requests, PyYAML==6.0.2]\n" +
		"node_exporter_enabled_collectors: [systemd, processes, {textfile: {directory: /srv/textfile}}]\nnode_exporter_disabled_collectors: [mdadm]\n" +
		"node_exporter_web_listen_address: [\"0.0.0.0:9100\", \"127.0.0.1:9101\"]\nnodejs_version: 20\nruby_version: \"3.1\"\n" +
		"grafana_dashboards_default: [{dashboard_id: 1860, revision_id: 37, replacements: [{placeholder: DS_PROMETHEUS, replacement: prometheus}]}]\n" +
		"firewalld_configs_extra: [{name: web, group: openhpc, rule: {service: http, state: enabled, permanent: true}}, {name: not ours, group: nosuchgroup, rule: {port: 1/tcp}}]\n"
	if err := os.WriteFile(filepath.Join(site.Environment, "inventory", "group_vars", "all", "zz-site-cvmfs-podman.yml"), []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	// a site's checkout whose desktop task pins a newer turbovnc
	appliancesite.EditFile(t, site, "ansible/roles/openondemand/tasks/vnc_compute.yml", func(s string) string {
		return strings.Replace(s, "- turbovnc-3.0.1", "- turbovnc-3.1.4", 1)
	})
	res = resolveSite(ctx, t, site, tg, req)
	wantCvmfs(t, res, []string{"CVMFS_QUOTA_LIMIT", "CVMFS_HTTP_PROXY", "CVMFS_USE_GEOAPI"}, "20000", "'http://"+srv.IP+":3128'")
	if _, out := withResolved(t, res, "openondemand_desktop"); !slices.Equal(out.Packages[:2], []string{"turbovnc-3.1.4", "nmap-ncat"}) {
		t.Errorf("the desktop's packages from the site's vnc_compute.yml: %v, want its turbovnc-3.1.4", out.Packages)
	}
	wantValue(t, res.Values["podman"], "podman_users", []any{
		map[string]any{"name": "podman", "uid": 1001, "home": "/var/lib/podman"},
		map[string]any{"name": "containers", "uid": 1500, "home": "/srv/containers"}})
	podmanUser(res, "containers")
	wantValue(t, res.Values[""], "node_exporter_version", "1.12.0")
	wantValue(t, res.Values[""], "node_exporter_checksum", strings.Repeat("ab", 32))
	wantValue(t, res.Values["openondemand"], "openondemand_code_server_version", "4.103.0")
	wantValue(t, res.Values["slurm_exporter"], "slurm_exporter_version", "0.23")
	wantValue(t, res.Values["slurm_exporter"], "slurm_exporter_release", "2")
	wantValue(t, res.Values["opkssh"], "opkssh_install_version", "v0.14.0")
	wantValue(t, res.Values["stackhpc.os-manila-mount"], "os_manila_mount_ceph_version", "19.2.3")
	wantValue(t, res.Values["journald"], "journald_storage", "volatile")
	wantValue(t, res.Values["stackhpc.linux.vgpu"], "vgpu_nvidia_mig_manager_rpm_url", "https://mirror.site.example/mig/nvidia-mig-manager-0.13.0-1.x86_64.rpm")
	if got := res.RoleConditions["journald"][`journald_storage == "persistent"`]; got.Holds || got.Error != "" {
		t.Errorf("journald_storage == persistent, a site's volatile: %+v, want it not to hold", got)
	}
	wantSiteGroups(t, res)
	// a state directory the site's group_vars give the build host too
	wantValue(t, res.Values["mysql"], "mysql_datadir", "/var/lib/state/mysql")
	wantValue(t, res.Values["opensearch"], "opensearch_data_path", "/var/lib/state/opensearch/data")
	wantValue(t, res.Values["opensearch"], "opensearch_config_path", "/var/lib/state/opensearch/config")
	vals = res.Values[""]
	overrides := map[string]any{
		"appliances_extra_packages_other": []any{"fatimage-site-extra"},
		"openhpc_packages_extra":          []any{"slurm-sview-ohpc"},
		"appliances_local_users_extra":    []any{map[string]any{"user": map[string]any{"name": "sitebot", "uid": 1234}}},
		"ondemand_package_version":        "4.1.5",
		"grafana_version":                 "10.4.19",
		"openondemand_auth":               "oidc",
		// templated from the VM's major version (9)
		"kernel_modules_denylist":   []any{"sctp", "dccp"},
		"appliances_extra_packages": append(want, "fatimage-site-extra"),
	}
	for name, want := range overrides {
		got := vals[name]
		if !reflect.DeepEqual(got.Value, want) && jsonish(got.Value) != jsonish(want) {
			t.Errorf("%s with the site's override: %+v, want %v", name, got, want)
		}
	}
}

// wantCvmfs checks the eessi role's cvmfs_config: its keys in the
// order the site's Ansible gives (the role's template writes them so),
// its quota and its proxy.
func wantCvmfs(t *testing.T, res *appliance.Result, keys []string, quota, proxy string) {
	t.Helper()
	v := res.Values["eessi"]["cvmfs_config"]
	m, _ := v.Value.(map[string]any)
	if !slices.Equal(v.Keys, keys) || jsonish(m["CVMFS_QUOTA_LIMIT"]) != quota || m["CVMFS_HTTP_PROXY"] != proxy {
		t.Errorf("cvmfs_config: %+v, want keys %v, quota %s, proxy %s", v, keys, quota, proxy)
	}
}

// stepRuns finds the step of kind and name (and task file) and says
// whether the build host runs it.
func stepRuns(t *testing.T, res *appliance.Result, steps []appliance.Step, kind, name, from string) bool {
	t.Helper()
	for _, st := range steps {
		if st.Kind == kind && (st.Name == name || st.Hook == name) && st.TasksFrom == from {
			runs, _, err := res.Runs(st)
			if err != nil {
				t.Fatal(err)
			}
			return runs
		}
	}
	t.Fatalf("no step %s %s %s in fatimage.yml", kind, name, from)
	return false
}

// TestApplianceStepsLab lists what fatimage.yml runs for a fat build and
// for an extra build (doca,cuda), lets the site's Ansible say which steps
// the build host runs, then runs the site environment's hook and one of
// the appliance's roles on the VM through the site's ansible-playbook.
func TestApplianceStepsLab(t *testing.T) {
	ctx, srv, comm := labVM(t, "appliance-steps", 5*time.Minute)
	tg := applianceTarget(srv)
	for _, c := range []struct {
		groups           []string
		runs, runsNot    [][3]string
		tasksFromOfTuned string
	}{
		{groups: []string{"fatimage"},
			runs: [][3]string{{"role", "stackhpc.openhpc", "install-ohpc.yml"}, {"role", "openondemand", ""},
				{"role", "cloudalchemy.grafana", "install.yml"}, {"hook", "post", ""}, {"tasks", "cleanup.yml", ""}},
			runsNot: [][3]string{{"role", "doca", ""}, {"role", "basic_users", ""}, {"hook", "pre", ""},
				{"role", "freeipa", "client-install.yml"}}},
		{groups: []string{"doca", "cuda"},
			runs:    [][3]string{{"role", "doca", ""}, {"tasks", "cleanup.yml", ""}},
			runsNot: [][3]string{{"role", "stackhpc.openhpc", "install-ohpc.yml"}, {"role", "openondemand", ""}}},
	} {
		site := appliancesite.New(t, appliancesite.Overrides, c.groups...)
		steps, err := site.Steps()
		if err != nil {
			t.Fatal(err)
		}
		var req appliance.Request
		req.AddSteps(steps)
		res := resolveSite(ctx, t, site, tg, req)
		for _, s := range c.runs {
			if !stepRuns(t, res, steps, s[0], s[1], s[2]) {
				t.Errorf("groups %v: %s %s %s does not run", c.groups, s[0], s[1], s[2])
			}
		}
		for _, s := range c.runsNot {
			if stepRuns(t, res, steps, s[0], s[1], s[2]) {
				t.Errorf("groups %v: %s %s %s runs", c.groups, s[0], s[1], s[2])
			}
		}
	}
	// A templated task file, as Ansible templates it for a build.
	site := appliancesite.New(t, appliancesite.Overrides, "fatimage")
	steps, _ := site.Steps()
	var req appliance.Request
	req.AddSteps(steps)
	res := resolveSite(ctx, t, site, tg, req)
	for _, st := range steps {
		if st.Name == "tuned" {
			if v := res.Expressions[st.TasksFrom]; v.Value != "main.yml" {
				t.Errorf("tuned's task file %q: %+v, want main.yml (a build)", st.TasksFrom, v)
			}
		}
	}

	var log bytes.Buffer
	hook := filepath.Join(site.Environment, "hooks", "post.yml")
	if err := site.Run(ctx, tg, appliance.Play{Playbook: hook}, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if got := run(t, comm, "cat /etc/fatimage-site-hook"); got != appliancesite.Overrides {
		t.Errorf("the hook wrote %q, want the environment's name", got)
	}
	log.Reset()
	if err := site.Run(ctx, tg, appliance.Play{Role: "journald"}, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if got := run(t, comm, "sudo cat /etc/systemd/journald.conf.d/ansible-slurm-appliance.conf"); !strings.Contains(got, "Storage=persistent") {
		t.Errorf("the journald role wrote %q", got)
	}
	if strings.Contains(log.String(), string(tg.PrivateKey)) {
		t.Error("the key is in ansible's output")
	}
}

// BenchmarkApplianceResolve measures one resolution as a build does it:
// the site environment's variables the issue names plus what decides
// fatimage.yml's steps, on a lab VM; it prints absolute seconds.
func BenchmarkApplianceResolve(b *testing.B) {
	labtest.Require(b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	srv, _, stop := labtest.BootDial(ctx, b, theLab, "appliance-bench", "")
	defer stop()
	site := appliancesite.New(b, appliancesite.Overrides, "fatimage")
	steps, err := site.Steps()
	if err != nil {
		b.Fatal(err)
	}
	req := appliance.Request{Queries: []appliance.Query{{Vars: siteVars}}}
	req.AddSteps(steps)
	var total time.Duration
	n := 0
	for b.Loop() {
		res, err := site.Resolve(ctx, applianceTarget(srv), req, &bytes.Buffer{})
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("resolution %d: %.2f s (%d variables, %d patterns, %d conditions, %d expressions)", n+1,
			res.Duration.Seconds(), len(siteVars), len(req.Patterns), len(req.Conditions), len(req.Expressions))
		total += res.Duration
		n++
	}
	b.ReportMetric(total.Seconds()/float64(n), "resolve-s")
}

// resultLookup is a resolution as packagesets reads it.
type resultLookup struct{ res *appliance.Result }

func (l resultLookup) Value(role, name string) (any, bool, error) {
	v := l.res.Values[role][name]
	if v.Error != "" {
		return nil, true, errors.New(v.Error)
	}
	return v.Value, v.Defined, nil
}

func (l resultLookup) Holds(role, cond string) (bool, error) {
	return l.res.RoleConditions[role][cond].Holds, nil
}

func (l resultLookup) Keys(role, name string) []string { return l.res.Values[role][name].Keys }

func (l resultLookup) TaskPackages(role, file string) ([][]string, error) {
	tp := l.res.Tasks[appliance.TaskRef{Role: role, File: file}]
	if tp.Error != "" {
		return nil, errors.New(tp.Error)
	}
	return tp.Lists, nil
}

func (l resultLookup) Text(role, name string) (string, bool, error) {
	v := l.res.Texts[role][name]
	if v.Error != "" {
		return "", true, errors.New(v.Error)
	}
	text, _ := v.Value.(string)
	return text, v.Defined, nil
}

// withResolved is built-in group name with the values res resolved.
func withResolved(t *testing.T, res *appliance.Result, name string) (builtin, out packagesets.Group) {
	t.Helper()
	groups, err := packagesets.Expand(name)
	if err != nil || len(groups) != 1 {
		t.Fatal(groups, err)
	}
	out, _, err = packagesets.WithAppliance(groups[0], resultLookup{res})
	if err != nil {
		t.Fatalf("group %s with the resolved values: %v", name, err)
	}
	return groups[0], out
}

// wantGroupAsBuiltIn: the stock values give the groups their built-in
// content (the chrony role's defaults rendered as its template does).
func wantGroupAsBuiltIn(t *testing.T, res *appliance.Result, names ...string) {
	t.Helper()
	for _, name := range names {
		builtin, out := withResolved(t, res, name)
		if !reflect.DeepEqual(out.Content, builtin.Content) {
			t.Errorf("group %s from the stock values:\n%v\nwant the built-in\n%v", name, out.Content, builtin.Content)
		}
	}
}

// wantSiteGroups: chrony.conf from the site's chrony variables (its
// maxupdateskew 5.0 as the template prints it, no rtcsync), HPL 2.4 unpinned (the template must give it), its
// ansible-init list at the plugin's pins and its own.
func wantSiteGroups(t *testing.T, res *appliance.Result) {
	t.Helper()
	_, chrony := withResolved(t, res, "chrony")
	conf := chrony.Content["files"].([]any)[0].(map[string]any)["content"].(string)
	if want := "allow 10.60.0.0/16\ncommandkey 1\ndriftfile /var/lib/chrony/chrony.drift\ndumpdir /srv/chrony\ndumponexit\nkeyfile /etc/chrony/chrony.keys\n" +
		"local stratum 10\nlog tracking rtc\nlogchange 0.5\nlogdir /var/log/chrony\nmaxupdateskew 5.0\nrtconutc\npool ntp.site.example iburst maxsources 3\nserver 10.0.0.1\n"; conf != want {
		t.Errorf("chrony.conf from the site's values:\n%s\nwant %q", conf, want)
	}
	_, ne := withResolved(t, res, "node_exporter")
	unit := ne.Content["systemd_units"].([]any)[0].(map[string]any)["content"].(string)
	if want := "\nExecStart=/usr/local/bin/node_exporter --collector.systemd --collector.processes --collector.textfile --collector.textfile.directory=/srv/textfile " +
		"--no-collector.mdadm --web.listen-address=0.0.0.0:9100 --web.listen-address=127.0.0.1:9101 --web.telemetry-path=/metrics\n"; !strings.Contains(unit, want) {
		t.Errorf("node_exporter's unit from the site's values:\n%s\nwant %q", unit, want)
	}
	// the site's streams: Rocky 9's vars file leaves them to group_vars
	wantValue(t, res.Values["osc.ood"], "additional_rpm_installs", []any{"lua-posix", "@nodejs:20", "@ruby:3.1"})
	_, graf := withResolved(t, res, "grafana")
	if d := graf.Content["grafana_dashboards"].([]any); !reflect.DeepEqual(d[0], map[string]any{"id": 1860, "revision": 37, "replacements": map[string]any{"DS_PROMETHEUS": "prometheus"}}) ||
		strings.Contains(fmt.Sprint(d), "13427") {
		t.Errorf("grafana's dashboards from the site's grafana_dashboards_default: %v", d)
	}
	_, fw := withResolved(t, res, "firewalld")
	if z := fw.Content["files"].([]any)[0].(map[string]any)["content"].(string); !strings.Contains(z, "<zone target=\"ACCEPT\">") ||
		!strings.Contains(z, "<service name=\"cockpit\"/>\n  <service name=\"http\"/>\n</zone>") {
		t.Errorf("the public zone from the site's firewalld_configs_extra:\n%s", z)
	}
	_, hpl := withResolved(t, res, "hpctests")
	if d := hpl.Content["downloads"].([]any)[0].(map[string]any); d["destination"] != "/opt/hpl/hpl-2.4.tar.gz" || d["sha256"] != "" || len(hpl.Unpinned()) != 1 {
		t.Errorf("HPL from the site's 2.4: %v, unpinned %v", d, hpl.Unpinned())
	}
	_, ai := withResolved(t, res, "ansible_init")
	reqs := ai.Content["python_envs"].([]any)[0].(map[string]any)["requirements"]
	if want := []any{"ansible==8.7.0", "requests==2.32.3", "PyYAML==6.0.2"}; !reflect.DeepEqual(reqs, want) {
		t.Errorf("ansible-init's requirements from the site's list: %v, want %v", reqs, want)
	}
}

// wantStockDashboards: the common group_vars' grafana_dashboards give
// the grafana group the dashboards its built-in sets hold (the group's,
// the appliance_dir set's, and openondemand's when the inventory has it).
func wantStockDashboards(t *testing.T, res *appliance.Result) {
	t.Helper()
	_, graf := withResolved(t, res, "grafana")
	got := graf.Content["grafana_dashboards"].([]any)
	sets, err := packagesets.Resolve([]string{"grafana", "openondemand"}, map[string]bool{"appliance_dir": true})
	if err != nil {
		t.Fatal(err)
	}
	var want []any
	for _, g := range sets {
		if g.Name == "grafana" {
			want = append(want, g.Content["grafana_dashboards"].([]any)...)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("grafana's dashboards from the stock values: %v, want the built-in sets' %v", got, want)
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(x any) bool { return reflect.DeepEqual(x, w) }) {
			t.Errorf("grafana's dashboards from the stock values lack the built-in %v: %v", w, got)
		}
	}
}
