package fatimage

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/python"
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
				"kernel_modules_denylist":   list("sctp", "dccp"),
				"appliances_local_users":    str(users),
				"dnf_repos_extra": str(map[string]any{
					"siteextra": map[string]any{"9": map[string]any{"pulp_path": "site/extra/el9/x86_64", "pulp_timestamp": "20251106T211545", "repo_file": "site-extra"}},
					"rl8only":   map[string]any{"8": map[string]any{"pulp_path": "x", "pulp_timestamp": "1", "repo_file": "x"}},
					"baseos": map[string]any{"9.6": map[string]any{"pulp_path": "rocky/9.6/BaseOS/x86_64/os", "pulp_timestamp": "20990101T000000",
						"repo_file": "rocky", "pulp_content_url": "https://pulp.site.example/pulp/content/"}},
				}),
				"dnf_repos_pulp_content_url":          str("https://ark.example/pulp/content"),
				"node_exporter_version":               str("1.11.1"),
				"openondemand_install_app_rstudio":    str(map[string]any{"rstudio": map[string]any{"version": "2026.01.1"}}),
				"openondemand_install_app_codeserver": str(map[string]any{"codeserver": map[string]any{"version": "2025.09.1"}}),
				"openondemand_install_app_jupyter":    str(map[string]any{"jupyter": map[string]any{"version": "master"}}),
				"ansible_distribution_version":        str("9.6"),
				"ansible_distribution_major_version":  str("9"),
			},
			"osc.ood":     {"ondemand_dex_package": str("ondemand-dex")},
			"mysql":       {"mysql_tag": str("8.0.30")},
			"opensearch":  {"opensearch_version": str("2.9.0")},
			"filebeat":    {"filebeat_version": str("7.12.1")},
			"slurm_tools": {"pytools_gitref": str("v3.0")},
			"podman": {"podman_users": str([]any{map[string]any{"name": "podman", "comment": "Used for running all containers",
				"home": "/var/lib/podman", "uid": "1001"}})},
		},
		RoleConditions: map[string]map[string]appliance.Truth{
			"":             {},
			"openondemand": {},
			"osc.ood":      {"install_ondemand_dex | bool": {Holds: true}},
		},
	}
}

// holdAll makes every requested condition of res hold (or not).
func holdAll(res *appliance.Result, holds bool) {
	for _, q := range applianceRequest().Queries {
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
	for _, want := range []string{"fatimage-site-extra", "slurm-sview-ohpc", "ondemand-4.1.5", "grafana-10.4.19", "mod_auth_openidc", "ondemand-dex", "certbot", "mysql"} {
		if !slices.Contains(p.sets.Packages, want) {
			t.Errorf("packages lack %s: %v", want, p.sets.Packages)
		}
	}
	for _, gone := range []string{"ondemand-4.1.4", "grafana-10.4.18", "nano", ""} {
		if slices.Contains(p.sets.Packages, gone) {
			t.Errorf("packages keep %q: %v", gone, p.sets.Packages)
		}
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
// wins; another version than the built-in needs the template's sha256.
func TestPlanFromApplianceBinaries(t *testing.T) {
	c, res, p := sitePlan(t, true)
	if len(p.binaries) != 1 || p.binaries[0].Version != "1.11.1" || p.binaries[0].SHA256 == "" {
		t.Errorf("the built-in version the site pins too: %+v", p.binaries)
	}
	res.Values[""]["node_exporter_version"] = appliance.Value{Defined: true, Value: "1.12.0"}
	if _, err := c.plan(newApplianceValues(res, ""), ""); err == nil || !strings.Contains(err.Error(), "(node_exporter): sha256 is required (version 1.12.0 is not a built-in one)") {
		t.Errorf("another version without its sha256: %v", err)
	}
	sum := strings.Repeat("ab", 32)
	c.Binaries = []Binary{{Name: "node_exporter", SHA256: sum}}
	p, err := c.plan(newApplianceValues(res, ""), "")
	if err != nil || p.binaries[0].Version != "1.12.0" || p.binaries[0].SHA256 != sum {
		t.Errorf("the site's version with the template's sha256: %+v, %v", p.binaries, err)
	}
	found := false
	for _, v := range p.applianceRecord().FromAppliance {
		found = found || v.Variable == "node_exporter_version" && slices.Equal(v.Values, []string{"1.12.0"})
	}
	if !found {
		t.Error("image.json does not record node_exporter_version")
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
	if len(scope["openondemand"].Conditions) != 2 || len(scope["osc.ood"].Conditions) != 1 {
		t.Errorf("conditions %+v", req.Queries)
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

// userNames are the names of the plan's users, in order.
func userNames(p *plan) []string {
	var names []string
	for _, u := range p.users {
		names = append(names, u.Name)
	}
	return names
}
