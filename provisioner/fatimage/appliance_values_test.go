package fatimage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/downloads"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/files"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/python"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/system"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// fakeCheckout is the least an appliance checkout and environment hold
// for appliance_environment to validate (no Ansible runs in these tests).
func fakeCheckout(t *testing.T) (repo, env string) {
	repo = t.TempDir()
	env = filepath.Join(repo, "environments", "site")
	for _, f := range []string{"packer/ansible-inventory.sh", "packer/openhpc_extravars.yml", "ansible/fatimage.yml", "environments/site/ansible.cfg", "environments/site/inventory/hosts",
		"ansible/roles/grafana-dashboards/files/openhpc-slurm.json", "ansible/roles/grafana-dashboards/files/slurm-jobs.json"} {
		p := filepath.Join(repo, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// an environment's ansible.cfg names its inventories
	if err := os.WriteFile(filepath.Join(env, "ansible.cfg"), []byte("[defaults]\ninventory = inventory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return repo, env
}

// overridesResult is a resolution as the site's Ansible gives it for
// testworld/appliancesite's overrides environment on a Rocky 9 VM.
func overridesResult() *appliance.Result {
	users := []any{
		map[string]any{"user": map[string]any{"name": "rocky", "home": "/var/lib/rocky", "move_home": true, "local": true}},
		map[string]any{"user": map[string]any{"name": "podman", "home": "/var/lib/podman", "uid": "1001"}, "enable": true},
		map[string]any{"user": map[string]any{"name": "slurm", "home": "/etc/slurm", "shell": "/sbin/nologin", "uid": float64(202), "system": true}},
		map[string]any{"group": map[string]any{"name": "prometheus", "gid": float64(976)}, "enable": false,
			"user": map[string]any{"name": "prometheus", "uid": float64(981)}},
		map[string]any{"user": map[string]any{"name": "sitebot", "uid": float64(1234)}},
	}
	str := func(v any) appliance.Value { return appliance.Value{Defined: true, Value: v} }
	list := func(s ...string) appliance.Value {
		var l []any
		for _, x := range s {
			l = append(l, x)
		}
		return str(l)
	}
	return &appliance.Result{
		Commit: "0123456789abcdef0123456789abcdef01234567", Environment: "/site/environments/overrides",
		Groups: []string{"builder", "kernel_modules", "extra_packages", "openhpc", "openondemand", "grafana", "podman", "node_exporter", "cluster"},
		Values: map[string]map[string]appliance.Value{
			"": {
				"appliances_extra_packages": list("htop", "python312", "", "fatimage-site-extra"),
				"openhpc_packages":          list("podman", "slurm-libpmi-ohpc", "slurm-sview-ohpc"),
				"ondemand_package":          str("ondemand-4.1.5"),
				"grafana_version":           str("10.4.19"),
				"grafana_plugins":           list("grafana-opensearch-datasource 2.8.1"),
				"grafana_dashboards": str([]any{map[string]any{"dashboard_file": "openhpc-slurm.json"},
					map[string]any{"dashboard_id": float64(1860), "revision_id": float64(37), "replacements": []any{map[string]any{"placeholder": "DS_PROMETHEUS", "replacement": "prometheus"}}}}),
				"kernel_modules_denylist": list("sctp", "dccp"),
				"appliances_local_users":  str(users),
				"dnf_repos_extra": str(map[string]any{
					"siteextra": map[string]any{"9": map[string]any{"pulp_path": "site/extra/el9/x86_64", "pulp_timestamp": "20251106T211545", "repo_file": "site-extra"}},
					"rl8only":   map[string]any{"8": map[string]any{"pulp_path": "x", "pulp_timestamp": "1", "repo_file": "x"}},
					"baseos": map[string]any{"9.6": map[string]any{"pulp_path": "rocky/9.6/BaseOS/x86_64/os", "pulp_timestamp": "20990101T000000",
						"repo_file": "rocky", "pulp_content_url": "https://pulp.site.example/pulp/content/"}},
				}),
				"dnf_repos_pulp_content_url":          str("https://ark.example/pulp/content"),
				"node_exporter_version":               str("1.11.1"),
				"node_exporter_checksum":              str("9f5ea48e5bc7b656f8a91a32e7d7deb89f70f73dabd0d974418aca15f37d6810"),
				"openondemand_install_app_rstudio":    str(map[string]any{"rstudio": map[string]any{"version": "2026.01.1"}}),
				"openondemand_install_app_codeserver": str(map[string]any{"codeserver": map[string]any{"version": "2025.09.1"}}),
				"openondemand_install_app_jupyter":    str(map[string]any{"jupyter": map[string]any{"version": "master"}}),
				"ansible_distribution_version":        str("9.6"),
				"ansible_distribution_major_version":  str("9"),
			},
			"osc.ood": {"ondemand_dex_package": str("ondemand-dex"), "additional_rpm_installs": list("lua-posix", "@nodejs:20", "@ruby:3.3")},
			"mysql":   {"mysql_tag": str("8.0.30"), "mysql_podman_user": str("podman"), "mysql_datadir": str("/var/lib/mysql")},
			"opensearch": {"opensearch_version": str("2.9.0"), "opensearch_podman_user": str("podman"),
				"opensearch_data_path": str("/usr/share/opensearch/data"), "opensearch_config_path": str("/usr/share/opensearch/config")},
			"filebeat":    {"filebeat_version": str("7.12.1"), "filebeat_podman_user": str("podman")},
			"slurm_tools": {"pytools_gitref": str("v3.0")},
			"journald":    {"journald_storage": str("persistent")},
			"prometheus.prometheus.node_exporter": {"node_exporter_enabled_collectors": str([]any{"systemd", "processes"}),
				"node_exporter_disabled_collectors": list("mdadm"), "node_exporter_web_listen_address": str("10.0.0.5:9100"),
				"node_exporter_web_telemetry_path": str("/metrics"), "node_exporter_textfile_dir": str("/var/lib/node_exporter"),
				"node_exporter_system_user": str("node-exp"), "node_exporter_system_group": str("node-exp"), "node_exporter_config_dir": str("/etc/node_exporter")},
			"podman": {"podman_users": str([]any{map[string]any{"name": "podman", "comment": "Used for running all containers",
				"home": "/var/lib/podman", "uid": "1001"}})},
			"sssd": {"sssd_packages": list("sssd-common"), "sssd_ldap_packages": list("sssd-ldap"), "sssd_mkhomedir_packages": list("oddjob-mkhomedir")},
			"stackhpc.openhpc": {"ohpc_slurm_packages": str(map[string]any{
				"control":  []any{"ohpc-slurm-server", "slurm-slurmctld-ohpc", "slurm-example-configs-ohpc"},
				"batch":    []any{"ohpc-base-compute", "ohpc-slurm-client"},
				"runtime":  []any{"slurm-ohpc", "munge", "slurm-slurmd-ohpc", "slurm-example-configs-ohpc", "lmod-ohpc"},
				"database": []any{"slurm-slurmdbd-ohpc"},
			})},
		},
		RoleConditions: map[string]map[string]appliance.Truth{
			"":             {},
			"openondemand": {},
			"osc.ood":      {"install_ondemand_dex | bool": {Holds: true}},
			"sssd":         {"sssd_install_ldap | bool": {Holds: true}},
			// a host in openhpc alone: runtime only
			"stackhpc.openhpc": {"openhpc_enable.runtime | bool": {Holds: true}},
			"journald":         {`journald_storage == "persistent"`: {Holds: true}},
		},
	}
}

// holdAll makes every requested condition of res hold (or not).
func holdAll(res *appliance.Result, holds bool) {
	for _, q := range applianceRequest().Queries {
		if res.RoleConditions[q.Role] == nil && len(q.Conditions) > 0 {
			res.RoleConditions[q.Role] = map[string]appliance.Truth{}
		}
		for _, c := range q.Conditions {
			res.RoleConditions[q.Role][c] = appliance.Truth{Holds: holds}
		}
	}
}

func siteConfig(t *testing.T) *Config {
	repo, env := fakeCheckout(t)
	clearArkEnv(t)
	var p Provisioner
	if err := p.Prepare(map[string]any{"appliance_dir": repo, "appliance_environment": env, "repos": []any{goodRepo()}}); err != nil {
		t.Fatal(err)
	}
	return &p.config
}

// sitePlan is the plan of a site's configuration from the overrides
// resolution, its conditions holding or not.
func sitePlan(t *testing.T, holds bool) (*Config, *appliance.Result, *plan) {
	c := siteConfig(t)
	res := overridesResult()
	holdAll(res, holds)
	p, err := c.plan(newApplianceValues(res, ""), "")
	if err != nil {
		t.Fatal(err)
	}
	return c, res, p
}

// TestPlanFromAppliance: each value a site overrides reaches the plan
// from the appliance variable the group data names, the host's groups
// decide the groups, and image.json says so.
func TestPlanFromAppliance(t *testing.T) {
	_, res, p := sitePlan(t, true)
	if !slices.Equal(p.setNames, []string{"always", "kernel_modules", "extra_packages", "openhpc", "openondemand", "grafana", "podman", "node_exporter", "cluster"}) {
		t.Errorf("groups %v: want the host's groups' built-in sets (builder as always)", p.setNames)
	}
	for _, want := range []string{"fatimage-site-extra", "slurm-sview-ohpc", "ondemand-4.1.5", "grafana-10.4.19", "mod_auth_openidc", "ondemand-dex", "certbot", "mysql",
		"@nodejs:20", "@ruby:3.3"} {
		if !slices.Contains(p.sets.Packages, want) {
			t.Errorf("packages lack %s: %v", want, p.sets.Packages)
		}
	}
	for _, gone := range []string{"ondemand-4.1.4", "grafana-10.4.18", "nano", "", "@nodejs:22/common", "@ruby:3.3/common"} {
		if slices.Contains(p.sets.Packages, gone) {
			t.Errorf("packages keep %q: %v", gone, p.sets.Packages)
		}
	}
	// the site's dashboards alone: the appliance_dir and openondemand
	// sets' dashboards are the variable's to give
	var dash []string
	for _, d := range p.GrafanaDashboards {
		dash = append(dash, fmt.Sprintf("%d %d %s %v", d.ID, d.Revision, filepath.Base(d.Source), d.Replacements))
	}
	if want := []string{"0 0 openhpc-slurm.json map[]", "1860 37 . map[DS_PROMETHEUS:prometheus]"}; !slices.Equal(dash, want) {
		t.Errorf("dashboards %q, want %q", dash, want)
	}
	if len(p.GitCheckouts) != 3 || p.GitCheckouts[1].Tag != "2026.01.1" || p.origins["git_checkouts"][1].variable != "openondemand_install_app_rstudio" {
		t.Errorf("the apps' checkouts: %+v, origins %+v", p.GitCheckouts, p.origins["git_checkouts"])
	}
	if len(p.ModprobeBlacklists) != 1 || !slices.Equal(p.ModprobeBlacklists[0].Modules, []string{"sctp", "dccp"}) {
		t.Errorf("modprobe_blacklist %+v", p.ModprobeBlacklists)
	}
	if o := p.origins["modprobe_blacklist"]; len(o) != 1 || o[0].variable != "kernel_modules_denylist" ||
		o[0].String() != `group "kernel_modules" (the appliance's kernel_modules_denylist)` {
		t.Errorf("origins %+v", o)
	}
	var names []string
	for _, u := range p.users {
		names = append(names, u.Name)
		if u.Name == "sitebot" && (u.UID != 1234 || !u.CreateHome) {
			t.Errorf("sitebot %+v", u)
		}
		if u.Name == "slurm" && (u.UID != 202 || u.CreateHome || u.Home != "/etc/slurm") {
			t.Errorf("slurm keeps its built-in definition: %+v", u)
		}
	}
	if !slices.Equal(names, []string{"node-exp", "podman", "slurm", "sitebot"}) {
		t.Errorf("users %v: want node_exporter's node-exp, then podman, slurm, sitebot (not the login user, not the disabled prometheus)", names)
	}
	var repos []string
	for _, r := range p.repos {
		repos = append(repos, r.RepoName+" "+r.BaseURL)
	}
	if !slices.Equal(repos, []string{
		"baseos https://pulp.site.example/pulp/content/rocky/9.6/BaseOS/x86_64/os/20990101T000000",
		"siteextra https://ark.example/pulp/content/site/extra/el9/x86_64/20251106T211545",
	}) {
		t.Errorf("repos %v: want the template's baseos replaced by the site's, siteextra added, no RL8-only one", repos)
	}
	rec := p.applianceRecord()
	if rec.Values != "site" || rec.Commit != res.Commit || rec.Environment != res.Environment {
		t.Errorf("record %+v", rec)
	}
	found := false
	for _, v := range rec.FromAppliance {
		if v.Variable == "grafana_version" && v.Group == "grafana" && slices.Equal(v.Values, []string{"grafana-10.4.19"}) {
			found = true
		}
	}
	if !found {
		t.Errorf("image.json lacks grafana_version: %+v", rec.FromAppliance)
	}
}

// TestPlanFromApplianceBinaries: the site's pin of a binary's version
// wins, checked against the sha256 the site pins next to it; an
// appliance without the checksum variable needs the template's sha256
// for another version than the built-in.
func TestPlanFromApplianceBinaries(t *testing.T) {
	c, res, p := sitePlan(t, true)
	builtin := builtinBinary("node_exporter")
	if len(p.binaries) != 1 || p.binaries[0].Version != "1.11.1" || p.binaries[0].SHA256 != builtin.SHA256 {
		t.Errorf("the built-in version and sha256 the site pins too: %+v", p.binaries)
	}
	siteSum := strings.Repeat("cd", 32)
	res.Values[""]["node_exporter_version"] = appliance.Value{Defined: true, Value: "1.12.0"}
	res.Values[""]["node_exporter_checksum"] = appliance.Value{Defined: true, Value: "sha256:" + siteSum}
	p, err := c.plan(newApplianceValues(res, ""), "")
	if err != nil || p.binaries[0].Version != "1.12.0" || p.binaries[0].SHA256 != siteSum {
		t.Errorf("the site's version and sha256: %+v, %v", p.binaries, err)
	}
	var vars []string
	for _, v := range p.applianceRecord().FromAppliance {
		if v.Group == "binaries" {
			vars = append(vars, v.Variable+"="+strings.Join(v.Values, ","))
		}
	}
	if !slices.Equal(vars, []string{"node_exporter_version=1.12.0", "node_exporter_checksum=" + siteSum}) {
		t.Errorf("image.json's binaries from the appliance: %v", vars)
	}
	res.Values[""]["node_exporter_checksum"] = appliance.Value{Defined: true, Value: []any{"a", "b"}}
	if _, err := c.plan(newApplianceValues(res, ""), ""); err == nil || !strings.Contains(err.Error(), "binary node_exporter: node_exporter_checksum: not a single value") {
		t.Errorf("a list for the sha256: %v", err)
	}
	res.Values[""]["node_exporter_checksum"] = appliance.Value{}
	if _, err := c.plan(newApplianceValues(res, ""), ""); err == nil || !strings.Contains(err.Error(), "(node_exporter): sha256 is required (version 1.12.0 is not a built-in one)") {
		t.Errorf("another version without the site's sha256: %v", err)
	}
	sum := strings.Repeat("ab", 32)
	c.Binaries = []Binary{{Name: "node_exporter", SHA256: sum}}
	p, err = c.plan(newApplianceValues(res, ""), "")
	if err != nil || p.binaries[0].Version != "1.12.0" || p.binaries[0].SHA256 != sum {
		t.Errorf("the site's version with the template's sha256: %+v, %v", p.binaries, err)
	}
}

// TestPlanFromApplianceConditions: an item under a condition that does
// not hold is left out, whatever the built-in values held.
func TestPlanFromApplianceConditions(t *testing.T) {
	_, _, p := sitePlan(t, false)
	for _, gone := range []string{"mod_auth_openidc", "ondemand-dex", "certbot", "python3-certbot-apache"} {
		if slices.Contains(p.sets.Packages, gone) {
			t.Errorf("packages hold %s though its condition does not hold", gone)
		}
	}
}

// TestPlanFromApplianceErrors: a variable the site lacks, or one its
// Ansible cannot template, fails the plan naming group and variable.
func TestPlanFromApplianceErrors(t *testing.T) {
	c := siteConfig(t)
	for name, change := range map[string]func(*appliance.Result){
		"undefined": func(r *appliance.Result) { r.Values[""]["grafana_version"] = appliance.Value{} },
		"template": func(r *appliance.Result) {
			r.Values[""]["grafana_version"] = appliance.Value{Defined: true, Error: "vault_x is undefined"}
		},
		"condition": func(r *appliance.Result) {
			r.RoleConditions["osc.ood"]["install_ondemand_dex | bool"] = appliance.Truth{Error: "boom"}
		},
		"repo": func(r *appliance.Result) {
			r.Values[""]["dnf_repos_extra"] = appliance.Value{Defined: true, Value: map[string]any{"x": map[string]any{"9": map[string]any{"repo_file": "x"}}}}
		},
		"no uid": func(r *appliance.Result) {
			r.Values[""]["appliances_local_users"] = appliance.Value{Defined: true, Value: []any{map[string]any{"user": map[string]any{"name": "x"}}}}
		},
	} {
		res := overridesResult()
		holdAll(res, true)
		change(res)
		_, err := c.plan(newApplianceValues(res, ""), "")
		want := map[string]string{"undefined": `group "grafana": grafana_version: not defined`, "template": "vault_x is undefined",
			"condition": `ondemand_dex_package (role osc.ood)`, "repo": "dnf_repos_extra.x: pulp_path, pulp_timestamp and repo_file are needed", "no uid": `appliances_local_users[0]: user "x": a name and a uid`}[name]
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", name, err, want)
		}
	}
}

// TestPlanFallback: without a site the built-in values of f49fc24 are
// the plan's, and image.json says so.
func TestPlanFallback(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	if err := p.Prepare(map[string]any{"groups": []any{"fatimage"}, "repos": []any{goodRepo()}}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.plan.sets.Packages, "grafana-10.4.18") || !slices.Contains(p.plan.sets.Packages, "ondemand-4.1.4") {
		t.Errorf("packages %v", p.plan.sets.Packages)
	}
	if rec := p.plan.applianceRecord(); rec == nil || rec.Values != "built-in" || rec.Commit != "f49fc24" {
		t.Errorf("record %+v", rec)
	}
	var out bytes.Buffer
	s := &state{cfg: &p.config, plan: p.plan, ui: &packersdk.BasicUi{Writer: &out, ErrorWriter: &out}}
	if err := stepAppliance(context.Background(), s); err != nil || s.plan != p.plan {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "fatimage: WARNING: no appliance_environment: the built-in groups use the values of appliance commit f49fc24") {
		t.Errorf("the run does not say the built-in values are used: %q", out.String())
	}
}

// TestStepApplianceNeedsSSH: a site's appliance is read over SSH with
// the communicator's key; without one the step fails before any Ansible.
func TestStepApplianceNeedsSSH(t *testing.T) {
	c := siteConfig(t)
	p, err := c.plan(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := &state{cfg: c, plan: p, replan: c.plan, ui: &packersdk.BasicUi{Writer: &out, ErrorWriter: &out},
		generated: map[string]any{"Host": "192.0.2.1", "Port": 22, "User": "rocky", "ConnType": "ssh"}}
	if err := stepAppliance(context.Background(), s); err == nil || !strings.Contains(err.Error(), "no SSH host, user and private key") {
		t.Errorf("got %v", err)
	}
}

// TestApplianceRequest: every variable and condition the groups name is
// asked for once, in its role's scope.
func TestApplianceRequest(t *testing.T) {
	req := applianceRequest()
	scope := map[string]appliance.Query{}
	for _, q := range req.Queries {
		scope[q.Role] = q
	}
	for role, v := range map[string]string{"": "appliances_extra_packages", "osc.ood": "ondemand_dex_package"} {
		if !slices.Contains(scope[role].Vars, v) {
			t.Errorf("role %q: %v lacks %s", role, scope[role].Vars, v)
		}
	}
	for _, v := range []string{"openhpc_packages", "ondemand_package", "grafana_version", "kernel_modules_denylist", "appliances_local_users"} {
		if !slices.Contains(scope[""].Vars, v) {
			t.Errorf("%s not asked for", v)
		}
	}
	if len(scope["openondemand"].Conditions) != 3 || len(scope["osc.ood"].Conditions) != 1 {
		t.Errorf("conditions %+v", req.Queries)
	}
	if want := []appliance.TaskRef{{Role: "openondemand", File: "vnc_compute.yml"}}; !slices.Equal(req.Tasks, want) {
		t.Errorf("task files %v, want %v", req.Tasks, want)
	}
}

func TestApplianceTarget(t *testing.T) {
	tg, err := applianceTarget(map[string]any{"Host": "10.0.0.5", "Port": int64(2222), "User": "rocky", "SSHPrivateKey": "PEM", "ConnType": "ssh"})
	if err != nil || tg.Host != "10.0.0.5" || tg.Port != 2222 || tg.User != "rocky" || string(tg.PrivateKey) != "PEM" {
		t.Errorf("%+v %v", tg, err)
	}
	if tg, err := applianceTarget(map[string]any{"Host": "h", "Port": float64(22), "User": "u", "SSHPrivateKeyFile": "/k"}); err != nil || tg.PrivateKeyFile != "/k" || tg.Port != 22 {
		t.Errorf("%+v %v", tg, err)
	}
	if _, err := applianceTarget(nil); err == nil || !strings.Contains(err.Error(), "no SSH host, user and private key") {
		t.Errorf("no generated data: %v", err)
	}
	if _, err := applianceTarget(map[string]any{"ConnType": "winrm"}); err == nil || !strings.Contains(err.Error(), "winrm") {
		t.Errorf("winrm: %v", err)
	}
}

// TestPlanFromApplianceAppsImagesPins: a site's overrides of which Open
// OnDemand apps are installed (an app's partition unset), jupyter's
// branch, the container images' tags and the slurm-tools venv's pin
// change the build plan: the checkouts, the images and the units running
// them, the venv's requirements.
func TestPlanFromApplianceAppsImagesPins(t *testing.T) {
	c := siteConfig(t)
	res := overridesResult()
	holdAll(res, true)
	res.Groups = append(res.Groups, "mysql", "opensearch", "filebeat", "slurm_stats")
	res.RoleConditions[""]["'rstudio' in ood_install_apps"] = appliance.Truth{Holds: false}
	str := func(v any) appliance.Value { return appliance.Value{Defined: true, Value: v} }
	res.Values[""]["openondemand_install_app_jupyter"] = str(map[string]any{"jupyter": map[string]any{"version": "v0.2"}})
	res.Values["mysql"]["mysql_tag"] = str("8.0.31")
	res.Values["opensearch"]["opensearch_version"] = str("2.11.0")
	res.Values["filebeat"]["filebeat_version"] = str("7.12.2")
	res.Values["slurm_tools"]["pytools_gitref"] = str("v2.0")
	p, err := c.plan(newApplianceValues(res, ""), "")
	if err != nil {
		t.Fatal(err)
	}
	var dests []string
	for _, g := range p.GitCheckouts {
		dests = append(dests, g.Destination)
	}
	if !slices.Equal(dests, []string{"/var/www/ood/apps/sys/jupyter", "/var/www/ood/apps/sys/codeserver"}) || p.GitCheckouts[0].Branch != "v0.2" {
		t.Errorf("the apps: %+v", p.GitCheckouts)
	}
	if o := p.origins["git_checkouts"]; len(o) < 2 || o[1].variable != "openondemand_install_app_codeserver" {
		t.Errorf("origins %+v", o)
	}
	images := map[string]bool{}
	for _, ct := range p.Containers {
		images[ct.Image[strings.LastIndex(ct.Image, "/")+1:]] = true
	}
	for _, want := range []string{"mysql:8.0.31", "opensearch:2.11.0", "filebeat-oss:7.12.2"} {
		if !images[want] {
			t.Errorf("images %v lack %s", images, want)
		}
	}
	for _, u := range p.SystemdUnits {
		if (u.Name == "opensearch.service" && !strings.Contains(u.Content, "opensearch:2.11.0")) ||
			(u.Name == "mysql.service" && !strings.Contains(u.Content, "mysql:8.0.31")) {
			t.Errorf("%s runs another image:\n%s", u.Name, u.Content)
		}
	}
	if !slices.ContainsFunc(p.PythonEnvs, func(e python.PythonEnv) bool {
		return e.Path == "/opt/slurm-tools" && slices.ContainsFunc(e.Requirements, func(r string) bool { return strings.HasSuffix(r, "slurm-openstack-tools.git@v2.0") })
	}) {
		t.Errorf("the slurm-tools venv: %+v", p.PythonEnvs)
	}
}

// TestPlanFromApplianceMissingRole: a site without the osc.ood role
// builds what needs none of its values; a build of the openondemand
// group fails naming the role and where the site's Ansible looks for it.
func TestPlanFromApplianceMissingRole(t *testing.T) {
	c := siteConfig(t)
	res := overridesResult()
	holdAll(res, true)
	delete(res.Values, "osc.ood")
	delete(res.RoleConditions, "osc.ood")
	res.MissingRoles = map[string]string{"osc.ood": "/site/roles, /galaxy/roles"}
	_, err := c.plan(newApplianceValues(res, ""), "")
	if err == nil || !strings.Contains(err.Error(), `group "openondemand"`) ||
		!strings.Contains(err.Error(), "the role osc.ood is not installed: the site's Ansible looks for it in /site/roles, /galaxy/roles") {
		t.Errorf("openondemand without osc.ood: %v", err)
	}
	res.Groups = slices.DeleteFunc(res.Groups, func(g string) bool { return g == "openondemand" })
	if _, err := c.plan(newApplianceValues(res, ""), ""); err != nil {
		t.Errorf("a build without openondemand: %v", err)
	}
}

// TestOODAppsNotInstalled: an app the site's ood_install_apps names that
// the openondemand group installs no checkout of is said, not skipped
// silently; the built-in ones are not.
func TestOODAppsNotInstalled(t *testing.T) {
	c := siteConfig(t)
	res := overridesResult()
	holdAll(res, true)
	apps := map[string]any{"jupyter": map[string]any{}, "rstudio": map[string]any{}, "codeserver": map[string]any{}}
	res.Values[""][oodAppsVar] = appliance.Value{Defined: true, Value: apps}
	p, err := c.plan(newApplianceValues(res, ""), "")
	if err != nil {
		t.Fatal(err)
	}
	if w := oodAppsNotInstalled(res, p); w != "" {
		t.Errorf("the built-in apps: %s", w)
	}
	apps["matlab"] = map[string]any{"repo": "https://github.com/stackhpc/ood-stackhpc-matlab.git"}
	if w := oodAppsNotInstalled(res, p); !strings.Contains(w, "ood_install_apps names matlab, which the openondemand group does not install") {
		t.Errorf("matlab: %q", w)
	}
}

// With the site's appliance the major is its facts' (the build VM's, as
// the site's Ansible gathered them), whatever the repositories say: on
// Rocky 8 the groups take their RL8 values.
func TestPlanFromApplianceFactsMajor(t *testing.T) {
	c := siteConfig(t)
	res := overridesResult()
	holdAll(res, true)
	res.Groups = append(res.Groups, "rebuild")
	res.Values[""]["ansible_distribution_version"] = appliance.Value{Value: "8.10", Defined: true}
	res.Values[""]["ansible_distribution_major_version"] = appliance.Value{Value: "8", Defined: true}
	p, err := c.plan(newApplianceValues(res, ""), "")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.PythonEnvs, func(e python.PythonEnv) bool { return e.Path == "/opt/slurm-tools" })
	if p.osMajor != "8" || i < 0 || p.PythonEnvs[i].Interpreter != "python3.9" || !slices.Contains(p.sets.Packages, "el8:python39") {
		t.Errorf("major %q, python_envs %+v, packages %v", p.osMajor, p.PythonEnvs, p.sets.Packages)
	}
}

// TestApplianceClusterPlay: bootstrap.yml adds appliances_local_users and
// moves the login user's home in its play for `cluster`, so a build host
// outside it gets neither (TestApplianceOwnBuild found the difference),
// but for podman, which the podman role adds for a host in podman;
// move_login_home set in the template still decides.
func TestApplianceClusterPlay(t *testing.T) {
	for _, move := range []*bool{nil, new(bool)} {
		c := siteConfig(t)
		c.MoveLoginHome = move
		c.Downloads = []downloads.Download{{URL: "https://example.org/a.tar.gz", Destination: "/opt/a.tar.gz", Owner: "siteowner", SHA256: strings.Repeat("a", 64)}}
		res := overridesResult()
		res.Groups = slices.DeleteFunc(res.Groups, func(g string) bool { return g == "cluster" })
		holdAll(res, true)
		p, err := c.plan(newApplianceValues(res, ""), "")
		if err != nil {
			t.Fatal(err)
		}
		names := userNames(p)
		if !slices.Equal(names, []string{"node-exp", "podman"}) || p.moveLoginHome {
			t.Errorf("move_login_home %v: users %v, moveLoginHome %v: want the podman role's podman and node_exporter's node-exp only, no move", move, names, p.moveLoginHome)
		}
		// grafana's package makes its user, after the packages: its
		// dashboards' owner is not checked before them
		if !slices.Contains(p.sets.packageUsers, "grafana") || slices.ContainsFunc(p.ownersToCheck(), func(o [3]string) bool { return o[1] == "grafana" }) {
			t.Errorf("left to the packages %v, owners checked first %v: want grafana in the first only", p.sets.packageUsers, p.ownersToCheck())
		}
		if !slices.ContainsFunc(p.ownersToCheck(), func(o [3]string) bool { return o[1] == "siteowner" }) {
			t.Errorf("owners checked first %v: the download's owner, whom nothing makes, is not", p.ownersToCheck())
		}
	}
	c := siteConfig(t)
	c.MoveLoginHome = new(bool)
	*c.MoveLoginHome = true
	res := overridesResult()
	holdAll(res, true)
	p, err := c.plan(newApplianceValues(res, ""), "")
	if err != nil || !p.moveLoginHome {
		t.Errorf("move_login_home = true in a cluster build: %v, %v", p.moveLoginHome, err)
	}
}

// TestPlanFromAppliancePodmanUsers: for a host in podman, the podman
// role's users are the site's podman_users (the user module's
// arguments), after the local users as bootstrap.yml runs them: a site's
// own entry is made (in cluster or not), one of the built-in name and
// uid keeps the built-in definition, and a bad entry fails naming the
// variable.
func TestPlanFromAppliancePodmanUsers(t *testing.T) {
	site := []any{
		map[string]any{"name": "podman", "home": "/var/lib/podman", "uid": "1001"},
		map[string]any{"name": "containers", "uid": float64(1500), "home": "/srv/containers", "shell": "/bin/bash"},
	}
	for _, inCluster := range []bool{true, false} {
		c := siteConfig(t)
		res := overridesResult()
		res.Values["podman"]["podman_users"] = appliance.Value{Defined: true, Value: site}
		if !inCluster {
			res.Groups = slices.DeleteFunc(res.Groups, func(g string) bool { return g == "cluster" })
		}
		holdAll(res, true)
		p, err := c.plan(newApplianceValues(res, ""), "")
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]User{}
		for _, u := range p.users {
			byName[u.Name] = u
		}
		builtin, _ := packagesets.LookupUser("podman")
		if got := byName["podman"]; got != User(builtin) {
			t.Errorf("cluster %v: podman %+v, want the built-in %+v", inCluster, got, builtin)
		}
		want := User{Name: "containers", UID: 1500, Home: "/srv/containers", Shell: "/bin/bash", CreateHome: true}
		if got := byName["containers"]; got != want {
			t.Errorf("cluster %v: podman_users' containers %+v, want %+v", inCluster, got, want)
		}
	}
	// a site whose podman user is another: the built-in podman is not made
	c := siteConfig(t)
	res := overridesResult()
	res.Groups = slices.DeleteFunc(res.Groups, func(g string) bool { return g == "cluster" })
	res.Values["podman"]["podman_users"] = appliance.Value{Defined: true, Value: []any{map[string]any{"name": "ctr", "uid": float64(1600)}}}
	holdAll(res, true)
	p, err := c.plan(newApplianceValues(res, ""), "")
	if err != nil {
		t.Fatal(err)
	}
	if names := userNames(p); !slices.Equal(names, []string{"node-exp", "ctr"}) {
		t.Errorf("users %v, want node_exporter's node-exp and podman_users' ctr only", names)
	}
	res.Values["podman"]["podman_users"] = appliance.Value{Defined: true, Value: []any{map[string]any{"name": "ctr"}}}
	if _, err := c.plan(newApplianceValues(res, ""), ""); err == nil || !strings.Contains(err.Error(), `podman_users[0]: user "ctr": a name and a uid`) {
		t.Errorf("an entry without a uid: %v", err)
	}
	if !slices.ContainsFunc(applianceRequest().Queries, func(q appliance.Query) bool {
		return q.Role == "podman" && slices.Contains(q.Vars, "podman_users")
	}) {
		t.Error("the resolution does not ask for podman_users in the podman role's scope")
	}
}

// TestPlanFromApplianceSSSD: with the site's appliance, whether sssd-ldap
// joins the sssd group is the site's sssd_install_ldap (the sssd role's
// scope, where .stackhpc's builder group_vars set it), not the plugin's
// option, and the packages are the role's lists; the option with
// appliance_environment is refused at validate.
func TestPlanFromApplianceSSSD(t *testing.T) {
	for _, holds := range []bool{true, false} {
		c := siteConfig(t)
		res := overridesResult()
		res.Groups = append(res.Groups, "sssd")
		res.Values["sssd"]["sssd_mkhomedir_packages"] = appliance.Value{Defined: true, Value: []any{"oddjob-mkhomedir", "site-mkhomedir"}}
		holdAll(res, true)
		res.RoleConditions["sssd"]["sssd_install_ldap | bool"] = appliance.Truth{Holds: holds}
		p, err := c.plan(newApplianceValues(res, ""), "")
		if err != nil {
			t.Fatal(err)
		}
		var sssd packagesets.Group
		for _, g := range p.sets.groups {
			if g.Name == "sssd" {
				sssd = g
			}
		}
		want := []string{"sssd-common", "oddjob-mkhomedir", "site-mkhomedir"}
		if holds {
			want = append(want, "sssd-ldap") // a source with a condition and no items adds at the end
		}
		if !slices.Equal(sssd.Packages, want) {
			t.Errorf("sssd_install_ldap %v: the sssd group's packages %v, want %v", holds, sssd.Packages, want)
		}
		if got := slices.Contains(p.sets.Packages, "sssd-ldap"); got != holds {
			t.Errorf("sssd_install_ldap %v: sssd-ldap in the build's packages: %v", holds, got)
		}
	}
	if !slices.ContainsFunc(applianceRequest().Queries, func(q appliance.Query) bool {
		return q.Role == "sssd" && slices.Contains(q.Conditions, "sssd_install_ldap | bool") && slices.Contains(q.Vars, "sssd_ldap_packages")
	}) {
		t.Error("the resolution does not ask for sssd_install_ldap and sssd_ldap_packages in the sssd role's scope")
	}
	repo, env := fakeCheckout(t)
	clearArkEnv(t)
	var p Provisioner
	err := p.Prepare(map[string]any{"appliance_dir": repo, "appliance_environment": env, "repos": []any{goodRepo()}, "sssd_install_ldap": true})
	if err == nil || !strings.Contains(err.Error(), "sssd_install_ldap: not with appliance_environment") {
		t.Errorf("sssd_install_ldap with appliance_environment: %v", err)
	}
}

// userNames are the names of the plan's users, in order.
func userNames(p *plan) []string {
	var names []string
	for _, u := range p.users {
		names = append(names, u.Name)
	}
	return names
}

// TestPlanFromAppliancePodmanUser: the units and images of mysql,
// opensearch and filebeat are the site's *_podman_user's, a user its
// podman_users makes; a user no role makes (the role's become_user would
// fail) and a name that is none fail naming the group and the variable.
func TestPlanFromAppliancePodmanUser(t *testing.T) {
	site := func(user string) *appliance.Result {
		res := overridesResult()
		holdAll(res, true)
		res.Groups = append(res.Groups, "mysql", "opensearch", "filebeat")
		res.Values["podman"]["podman_users"] = appliance.Value{Defined: true, Value: []any{
			map[string]any{"name": "podman", "uid": float64(1001), "home": "/var/lib/podman"},
			map[string]any{"name": "containers", "uid": float64(1500), "home": "/srv/containers"}}}
		for _, svc := range []string{"mysql", "opensearch", "filebeat"} {
			res.Values[svc][svc+"_podman_user"] = appliance.Value{Defined: true, Value: user}
		}
		return res
	}
	c := siteConfig(t)
	p, err := c.plan(newApplianceValues(site("containers"), ""), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range p.Containers {
		if ct.User != "containers" {
			t.Errorf("%s pulled as %q, want the site's containers", ct.Image, ct.User)
		}
	}
	units := 0
	for _, u := range p.SystemdUnits {
		if !slices.Contains([]string{"mysql.service", "opensearch.service", "filebeat.service"}, u.Name) {
			continue
		}
		units++
		if !strings.Contains(u.Content, "\nUser=containers\nGroup=containers\n") || strings.Contains(u.Content, "=podman") ||
			u.Name == "mysql.service" && !strings.Contains(u.Content, "chown -R containers:containers /var/lib/mysql") {
			t.Errorf("%s:\n%s", u.Name, u.Content)
		}
	}
	if units != 3 || !slices.ContainsFunc(p.users, func(u User) bool { return u.Name == "containers" && u.UID == 1500 }) {
		t.Errorf("%d units, users %+v", units, p.users)
	}
	rec := p.applianceRecord()
	if !slices.ContainsFunc(rec.FromAppliance, func(v imageApplianceValue) bool {
		return v.Group == "mysql" && v.Variable == "mysql_podman_user" && v.Into == "content/containers/0/user" && slices.Equal(v.Values, []string{"containers"})
	}) {
		t.Errorf("image.json's record lacks mysql_podman_user: %+v", rec.FromAppliance)
	}
	_, err = c.plan(newApplianceValues(site("ctr"), ""), "")
	want := `group "mysql" (the appliance's mysql_podman_user): containers image docker.io/library/mysql:8.0.30: user "ctr" is made by neither podman_users nor appliances_local_users`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `group "filebeat" (the appliance's filebeat_podman_user)`) {
		t.Errorf("a user no role makes: %v, want %q", err, want)
	}
	if _, err = c.plan(newApplianceValues(site("ctr\nExecStartPre=/bin/sh"), ""), ""); err == nil || !strings.Contains(err.Error(), `group "mysql": containers[0]: user`) {
		t.Errorf("a user that is no name: %v", err)
	}
}

// TestPlanFromApplianceOODVersions: rstudio-server and code-server are
// at the openondemand role's openondemand_rstudio_version and
// openondemand_code_server_version (an appliance bump or a site's
// override), in the RPM's URL and the modulefile's name and text, on
// either major.
func TestPlanFromApplianceOODVersions(t *testing.T) {
	for _, major := range []string{"9", "8"} {
		p := planOnMajor(t, major, "openondemand", map[string]appliance.Value{
			"openondemand_rstudio_version":     {Defined: true, Value: "2026.01.0-100"},
			"openondemand_code_server_version": {Defined: true, Value: "4.103.0"},
		}, "openondemand_rstudio", "openondemand_codeserver")
		urls := contentURLs(p)
		for _, want := range []string{"/server/rhel" + major + "/x86_64/rstudio-server-rhel-2026.01.0-100-x86_64.rpm",
			"/coder/code-server/releases/download/v4.103.0/code-server-4.103.0-amd64.rpm"} {
			if !slices.ContainsFunc(urls, func(u string) bool { return strings.HasSuffix(u, want) }) {
				t.Errorf("Rocky %s: rpm_urls %v lack %s", major, urls, want)
			}
		}
		for dst, version := range map[string]string{"/opt/ohpc/pub/modulefiles/rstudio-server/2026.01.0-100": "2026.01.0-100",
			"/opt/ohpc/pub/modulefiles/code-server/4.103.0": "4.103.0"} {
			f, ok := fileAt(p, dst)
			if !ok || !strings.Contains(f.Content, `module-whatis "Version: `+version+`"`) || strings.Contains(f.Content, "2025.05.1-513") || strings.Contains(f.Content, "4.102.2") {
				t.Errorf("Rocky %s: modulefile %s: %+v", major, dst, f)
			}
		}
	}
}

// TestPlanFromApplianceGrafanaPlugins: the grafana group's plugins are
// the site's grafana_plugins (cloudalchemy.grafana's, "<id> <version>"),
// recorded in image.json; one without a version fails naming the
// variable.
func TestPlanFromApplianceGrafanaPlugins(t *testing.T) {
	c := siteConfig(t)
	res := overridesResult()
	holdAll(res, true)
	site := []any{"grafana-opensearch-datasource 2.9.0", "grafana-piechart-panel 1.6.4"}
	res.Values[""]["grafana_plugins"] = appliance.Value{Defined: true, Value: site}
	p, err := c.plan(newApplianceValues(res, ""), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.grafanaPlugins(); !slices.Equal(got, []string{"grafana-opensearch-datasource 2.9.0", "grafana-piechart-panel 1.6.4"}) {
		t.Errorf("grafana plugins %v, want the site's", got)
	}
	if !slices.ContainsFunc(p.applianceRecord().FromAppliance, func(v imageApplianceValue) bool {
		return v.Variable == "grafana_plugins" && v.Into == "grafana_plugins" && len(v.Values) == 2
	}) {
		t.Errorf("image.json lacks grafana_plugins: %+v", p.applianceRecord().FromAppliance)
	}
	res.Values[""]["grafana_plugins"] = appliance.Value{Defined: true, Value: []any{"grafana-piechart-panel"}}
	if _, err := c.plan(newApplianceValues(res, ""), ""); err == nil ||
		!strings.Contains(err.Error(), `group "grafana" (the appliance's grafana_plugins): "grafana-piechart-panel" must be "<plugin id> <version>"`) {
		t.Errorf("a plugin without its version: %v", err)
	}
}

// TestPlanFromApplianceK3s: k3s, its airgap images, helm and k3s-selinux
// are at the k3s role's k3s_version, k3s_helm_version,
// k3s_selinux_release and k3s_selinux_rpm_version, on either major.
func TestPlanFromApplianceK3s(t *testing.T) {
	for _, major := range []string{"9", "8"} {
		urls := contentURLs(planOnMajor(t, major, "k3s", map[string]appliance.Value{
			"k3s_version":             {Defined: true, Value: "v1.32.5+k3s1"},
			"k3s_helm_version":        {Defined: true, Value: "v3.17.0"},
			"k3s_selinux_release":     {Defined: true, Value: "v1.7.stable.1"},
			"k3s_selinux_rpm_version": {Defined: true, Value: "1.7-1"},
		}, "k3s"))
		for _, want := range []string{"/k3s-io/k3s/releases/download/v1.32.5+k3s1/k3s", "/k3s-io/k3s/releases/download/v1.32.5+k3s1/k3s-airgap-images-amd64.tar.zst",
			"/helm-v3.17.0-linux-amd64.tar.gz", "/k3s-io/k3s-selinux/releases/download/v1.7.stable.1/k3s-selinux-1.7-1.el" + major + ".noarch.rpm"} {
			if !slices.ContainsFunc(urls, func(u string) bool { return strings.HasSuffix(u, want) }) {
				t.Errorf("Rocky %s: %v lack %s", major, urls, want)
			}
		}
	}
}

// planOnMajor is a site's plan from the overrides resolution on a Rocky
// <major> VM whose host is in groups too, role's scope holding vals.
func planOnMajor(t *testing.T, major, role string, vals map[string]appliance.Value, groups ...string) *plan {
	t.Helper()
	c := siteConfig(t)
	res := overridesResult()
	holdAll(res, true)
	res.Groups = append(res.Groups, groups...)
	res.Values[""]["ansible_distribution_major_version"] = appliance.Value{Defined: true, Value: major}
	res.Values[""]["ansible_distribution_version"] = appliance.Value{Defined: true, Value: major + ".6"}
	res.Values[role] = vals
	p, err := c.plan(newApplianceValues(res, ""), "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// contentURLs are the URLs of the plan's downloads and rpm_urls.
func contentURLs(p *plan) []string {
	var urls []string
	for _, d := range p.Downloads {
		urls = append(urls, d.URL)
	}
	for _, r := range p.RPMURLs {
		urls = append(urls, r.URL)
	}
	return urls
}

// TestPlanFromAppliancePins: slurm_exporter's RPM, opkssh and manila's
// ceph-common are at their roles' slurm_exporter_version and
// slurm_exporter_release, opkssh_install_version and
// os_manila_mount_ceph_version (which the site's Ansible resolves for the
// VM's major), on either major.
func TestPlanFromAppliancePins(t *testing.T) {
	for _, major := range []string{"9", "8"} {
		c := siteConfig(t)
		res := overridesResult()
		holdAll(res, true)
		res.Groups = append(res.Groups, "slurm_exporter", "opkssh", "manila")
		res.Values[""]["ansible_distribution_major_version"] = appliance.Value{Defined: true, Value: major}
		res.Values[""]["ansible_distribution_version"] = appliance.Value{Defined: true, Value: major + ".6"}
		res.Values["slurm_exporter"] = map[string]appliance.Value{"slurm_exporter_version": {Defined: true, Value: "0.23"},
			"slurm_exporter_release": {Defined: true, Value: float64(2)}}
		res.Values["opkssh"] = map[string]appliance.Value{"opkssh_install_version": {Defined: true, Value: "v0.14.0"}}
		res.Values["stackhpc.os-manila-mount"] = map[string]appliance.Value{"os_manila_mount_ceph_version": {Defined: true, Value: "19.2.3"}}
		p, err := c.plan(newApplianceValues(res, ""), "")
		if err != nil {
			t.Fatal(err)
		}
		urls := contentURLs(p)
		for _, want := range []string{"/stackhpc/prometheus-slurm-exporter/releases/download/0.23/prometheus-slurm-exporter-0.23-2.el8.x86_64.rpm",
			"/openpubkey/opkssh/releases/download/v0.14.0/opkssh-linux-amd64"} {
			if !slices.ContainsFunc(urls, func(u string) bool { return strings.HasSuffix(u, want) }) {
				t.Errorf("Rocky %s: %v lack %s", major, urls, want)
			}
		}
		if !slices.Contains(p.sets.Packages, "ceph-common-19.2.3") || slices.ContainsFunc(p.sets.Packages, func(s string) bool { return strings.Contains(s, "ceph-common-1") && s != "ceph-common-19.2.3" }) {
			t.Errorf("Rocky %s: packages %v, want ceph-common-19.2.3 alone", major, p.sets.Packages)
		}
	}
}

// TestPlanFromApplianceStateDirs: mysql's and opensearch's units mount
// the site's mysql_datadir, opensearch_data_path and
// opensearch_config_path (the roles template them at build), on the
// host's side only: inside the containers the paths stay the images'.
func TestPlanFromApplianceStateDirs(t *testing.T) {
	c := siteConfig(t)
	res := overridesResult()
	holdAll(res, true)
	res.Groups = append(res.Groups, "mysql", "opensearch")
	res.Values["mysql"]["mysql_datadir"] = appliance.Value{Defined: true, Value: "/var/lib/state/mysql"}
	res.Values["opensearch"]["opensearch_data_path"] = appliance.Value{Defined: true, Value: "/var/lib/state/opensearch/data"}
	res.Values["opensearch"]["opensearch_config_path"] = appliance.Value{Defined: true, Value: "/var/lib/state/opensearch/config"}
	p, err := c.plan(newApplianceValues(res, ""), "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"mysql.service": {"RequiresMountsFor=/var/lib/state/mysql /etc/sysconfig/mysqld\n", "container_file_t /var/lib/state/mysql\n",
			"chown -R podman:podman /var/lib/state/mysql\n", "--volume /var/lib/state/mysql:/var/lib/mysql:U "},
		"opensearch.service": {"--volume /var/lib/state/opensearch/data:/usr/share/opensearch/data:U ",
			"--volume /var/lib/state/opensearch/config/internal_users.yml:/usr/share/opensearch/config/opensearch-security/internal_users.yml:U ",
			"--volume /var/lib/state/opensearch/config/opensearch.yml:/usr/share/opensearch/config/opensearch.yml:U ",
			"--volume /var/lib/state/opensearch/config/certs:/usr/share/opensearch/config/certs:U "},
	}
	for _, u := range p.SystemdUnits {
		for _, w := range want[u.Name] {
			if !strings.Contains(u.Content, w) {
				t.Errorf("%s lacks %q:\n%s", u.Name, w, u.Content)
			}
		}
		delete(want, u.Name)
	}
	if len(want) > 0 {
		t.Errorf("no unit %v", want)
	}
}

// TestPlanFromAppliancePodmanLoginUser: the roles' own default podman
// user is `{{ ansible_user }}`, the login user the site's Ansible runs
// as; the image has it (the base image's cloud user), so a site whose
// *_podman_user resolves to it builds, the run creating no user of that
// name; another user no role makes is still refused.
func TestPlanFromAppliancePodmanLoginUser(t *testing.T) {
	c := siteConfig(t)
	res := overridesResult()
	holdAll(res, true)
	res.Groups = append(res.Groups, "mysql", "opensearch", "filebeat")
	for _, svc := range []string{"mysql", "opensearch", "filebeat"} {
		res.Values[svc][svc+"_podman_user"] = appliance.Value{Defined: true, Value: "cloud-user"}
	}
	for login, ok := range map[string]bool{"cloud-user": true, "rocky": false, "": false} {
		av := newApplianceValues(res, "")
		av.loginUser = login
		p, err := c.plan(av, "")
		if !ok {
			if err == nil || !strings.Contains(err.Error(), `user "cloud-user" is made by neither podman_users nor appliances_local_users`) {
				t.Errorf("login user %q: %v, want the podman user refused", login, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("the login user as the podman user: %v", err)
		}
		for _, ct := range p.Containers {
			if ct.User != "cloud-user" {
				t.Errorf("%s pulled as %q, want the login user", ct.Image, ct.User)
			}
		}
		if len(p.Containers) != 3 || slices.Contains(userNames(p), "cloud-user") {
			t.Errorf("containers %+v, users %v", p.Containers, userNames(p))
		}
	}
}

// TestPlanFromApplianceHPL: the site's hpctests_hpl_version 2.3 is
// pinned by the plugin; another version fails the plan naming the
// variable unless the template's downloads replace the group's item
// with the file's sha256, which is then what is fetched and checked.
func TestPlanFromApplianceHPL(t *testing.T) {
	planOf := func(version string, template []downloads.Download) (*plan, error) {
		c := siteConfig(t)
		c.Downloads = template
		res := overridesResult()
		holdAll(res, true)
		res.Groups = append(res.Groups, "hpctests")
		res.Values["hpctests"] = map[string]appliance.Value{"hpctests_hpl_version": {Defined: true, Value: version}}
		return c.plan(newApplianceValues(res, ""), "")
	}
	hpl := func(p *plan) downloads.Download {
		i := slices.IndexFunc(p.Downloads, func(d downloads.Download) bool { return strings.HasPrefix(d.Destination, "/opt/hpl/") })
		if i < 0 {
			t.Fatalf("no HPL download in %+v", p.Downloads)
		}
		return p.Downloads[i]
	}
	p, err := planOf("2.3", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := hpl(p); d.SHA256 != "32c5c17d22330e6f2337b681aded51637fb6008d3f0eb7c277b163fadd612830" || d.Destination != "/opt/hpl/hpl-2.3.tar.gz" {
		t.Errorf("2.3: %+v", d)
	}
	_, err = planOf("2.4", nil)
	if err == nil || !strings.Contains(err.Error(), `group "hpctests": hpctests_hpl_version (role hpctests): the plugin pins no sha256 for the appliance's value (only for 2.3): give downloads an entry with destination /opt/hpl/hpl-2.4.tar.gz, its url and sha256`) ||
		strings.Contains(err.Error(), "insecure_skip_checksum") {
		t.Errorf("2.4 without the template's entry: %v", err)
	}
	sum := strings.Repeat("cd", 32)
	p, err = planOf("2.4", []downloads.Download{{URL: "https://mirror.example/hpl-2.4.tar.gz", SHA256: sum, Destination: "/opt/hpl/hpl-2.4.tar.gz"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := hpl(p); d.SHA256 != sum || d.URL != "https://mirror.example/hpl-2.4.tar.gz" || len(p.Downloads) != 1 {
		t.Errorf("2.4 with the template's entry: %+v", p.Downloads)
	}
}

// TestPlanFromApplianceChronyAnsibleInit: through the plan, chrony.conf
// has the site's time sources and allowed hosts, its scalars as the
// site's Ansible printed them (maxupdateskew 100.0) and no rtcsync when
// chrony_rtcsync_enabled does not hold; ansible-init's venv
// the site's list at the plugin's pins and the site's own; a name
// without a pin fails naming the variable.
func TestPlanFromApplianceChronyAnsibleInit(t *testing.T) {
	planOf := func(pip ...any) (*plan, error) {
		c := siteConfig(t)
		res := overridesResult()
		holdAll(res, true)
		res.Groups = append(res.Groups, "chrony", "ansible_init")
		res.Values[""]["ansible_init_pip_packages"] = appliance.Value{Defined: true, Value: pip}
		res.Values["mrlesmithjr.chrony"] = map[string]appliance.Value{
			"chrony_ntp_servers": {Defined: true, Value: []any{map[string]any{"server": "ntp.site.example", "type": "pool",
				"options": []any{map[string]any{"option": "iburst"}}}}},
			"chrony_allow_hosts": {Defined: true, Value: []any{"10.60.0.0/16"}},
			"chrony_log":         {Defined: true, Value: []any{"tracking"}},
		}
		res.Texts = map[string]map[string]appliance.Value{"mrlesmithjr.chrony": {
			"chrony_local_stratum": {Defined: true, Value: "10"}, "chrony_logdir": {Defined: true, Value: "/var/log/chrony"},
			"chrony_dumpdir": {Defined: true, Value: "/var/lib/chrony"}, "chrony_maxupdateskew": {Defined: true, Value: "100.0"},
		}}
		res.RoleConditions["mrlesmithjr.chrony"]["chrony_rtcsync_enabled | bool"] = appliance.Truth{Holds: false}
		return c.plan(newApplianceValues(res, ""), "")
	}
	p, err := planOf("ansible", "requests", "PyYAML==6.0.2")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.Files, func(f files.File) bool { return f.Destination == "/etc/chrony.conf" })
	if i < 0 || !strings.HasPrefix(p.Files[i].Content, "allow 10.60.0.0/16\ncommandkey 1\n") ||
		!strings.Contains(p.Files[i].Content, "\nlocal stratum 10\nlog tracking\nlogchange 0.5\nlogdir /var/log/chrony\nmaxupdateskew 100.0\nrtconutc\npool ntp.site.example iburst\n") ||
		strings.Contains(p.Files[i].Content, "debian") {
		t.Errorf("chrony.conf: %+v", p.Files)
	}
	j := slices.IndexFunc(p.PythonEnvs, func(e python.PythonEnv) bool { return e.Path == "/usr/lib/ansible-init" })
	if want := []string{"ansible==8.7.0", "requests==2.32.3", "PyYAML==6.0.2"}; j < 0 || !slices.Equal(p.PythonEnvs[j].Requirements, want) {
		t.Errorf("ansible-init's venv: %+v, want %v", p.PythonEnvs, want)
	}
	_, err = planOf("ansible", "openstacksdk")
	if err == nil || !strings.Contains(err.Error(), `group "ansible_init": ansible_init_pip_packages: openstacksdk: the plugin pins no version of it`) {
		t.Errorf("an unpinned name: %v", err)
	}
}

// TestPlanFromApplianceNodeExporter: node_exporter's unit runs with the
// flags of the site's node_exporter variables (read in the role's scope).
func TestPlanFromApplianceNodeExporter(t *testing.T) {
	res := overridesResult()
	holdAll(res, true)
	p, err := siteConfig(t).plan(newApplianceValues(res, ""), "")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.SystemdUnits, func(u system.SystemdUnit) bool { return u.Name == "node_exporter.service" })
	if i < 0 {
		t.Fatalf("no node_exporter unit in %+v", p.SystemdUnits)
	}
	want := "\nExecStart=/usr/local/bin/node_exporter --collector.systemd --collector.processes --no-collector.mdadm --web.listen-address=10.0.0.5:9100 --web.telemetry-path=/metrics\n"
	if !strings.Contains(p.SystemdUnits[i].Content, want) {
		t.Errorf("unit:\n%s\nwant %q", p.SystemdUnits[i].Content, want)
	}
}

// TestPlanFromApplianceNodeExporterUser: the site's names of the role's
// user and group and its config directory make the image's user (with
// the plugin's fixed ids, attributed to the group) and name the unit's
// User and Group.
func TestPlanFromApplianceNodeExporterUser(t *testing.T) {
	res := overridesResult()
	holdAll(res, true)
	ne := res.Values["prometheus.prometheus.node_exporter"]
	ne["node_exporter_system_user"] = appliance.Value{Defined: true, Value: "prom-node"}
	ne["node_exporter_system_group"] = appliance.Value{Defined: true, Value: "monitoring"}
	ne["node_exporter_config_dir"] = appliance.Value{Defined: true, Value: "/etc/prometheus/node"}
	p, err := siteConfig(t).plan(newApplianceValues(res, ""), "")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.users, func(u User) bool { return u.UID == 975 })
	if i < 0 || p.users[i].Name != "prom-node" || p.users[i].Group != "monitoring" || p.users[i].GID != 975 || p.users[i].Home != "/etc/prometheus/node" ||
		p.origins["users"][i].group != "node_exporter" || slices.ContainsFunc(p.users, func(u User) bool { return u.Name == "node-exp" }) {
		t.Fatalf("users %+v (origins %+v)", p.users, p.origins["users"])
	}
	j := slices.IndexFunc(p.SystemdUnits, func(u system.SystemdUnit) bool { return u.Name == "node_exporter.service" })
	if j < 0 || !strings.Contains(p.SystemdUnits[j].Content, "\nUser=prom-node\nGroup=monitoring\n") {
		t.Fatalf("units %+v", p.SystemdUnits)
	}
}

// TestPlanFromApplianceFirewalld: the public zone's file is the site's
// firewalld_configs applied; with no rule for the host's groups the
// image keeps the OS's zone (no file).
func TestPlanFromApplianceFirewalld(t *testing.T) {
	planOf := func(rules ...any) *plan {
		res := overridesResult()
		holdAll(res, true)
		res.Groups = append(res.Groups, "firewalld")
		res.Values[""]["firewalld_configs"] = appliance.Value{Defined: true, Value: rules}
		res.RoleConditions[""]["firewalld_configs | length > 0"] = appliance.Truth{Holds: len(rules) > 0}
		p, err := siteConfig(t).plan(newApplianceValues(res, ""), "")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	zone := func(p *plan) string {
		for _, f := range p.Files {
			if f.Destination == "/etc/firewalld/zones/public.xml" {
				return f.Content
			}
		}
		return ""
	}
	if z := zone(planOf()); z != "" {
		t.Errorf("no rule: %s, want no file", z)
	}
	z := zone(planOf(map[string]any{"service": "http", "state": "enabled", "permanent": true}))
	if !strings.Contains(z, "<zone>\n") || !strings.Contains(z, `<service name="http"/>`) {
		t.Errorf("a site's rule: %s", z)
	}
}
