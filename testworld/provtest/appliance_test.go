package provtest

import (
	"bytes"
	"context"
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
		{Vars: append(siteVars, "openondemand_oidc_remote_user_claim")},
		{Role: "openondemand", Vars: []string{"openondemand_oidc_remote_user_claim", "openondemand_auth"}},
		{Role: "stackhpc.openhpc", Vars: []string{"openhpc_job_maxtime", "openhpc_packages_extra"}},
		{Role: "eessi", Vars: []string{"cvmfs_config"}},
		{Role: "podman", Vars: []string{"podman_users"}},
	}}

	stock := appliancesite.New(t, ".stackhpc", "fatimage")
	res := resolveSite(ctx, t, stock, tg, req)
	vals := res.Values[""]
	if d, v := vals["ansible_distribution"], vals["ansible_distribution_version"]; d.Value != "Rocky" || v.Value != "9.6" {
		t.Fatalf("facts: distribution %v %v, want the lab VM's Rocky 9.6", d.Value, v.Value)
	}
	for _, name := range []string{"appliances_extra_packages_other", "openhpc_packages_extra", "appliances_local_users_extra",
		"ondemand_package_version", "grafana_version", "openondemand_auth", "kernel_modules_denylist"} {
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
	wantValue(t, res.Values["stackhpc.openhpc"], "openhpc_job_maxtime",
		roleDefault(t, filepath.Join(appliancesite.Dir(), "galaxy", "roles", "stackhpc.openhpc"), "openhpc_job_maxtime"))
	if !slices.Contains(res.Groups, "openondemand") || !slices.Contains(res.Groups, "builder") || slices.Contains(res.Groups, "doca") {
		t.Errorf("groups of a fatimage build: %v", res.Groups)
	}
	// The builder is in squid: the common group_vars make its own address
	// the cvmfs proxy (which the plugin leaves out), keys in the role's
	// order; the podman user is appliances_local_users_podman.
	wantCvmfs(t, res, []string{"CVMFS_QUOTA_LIMIT", "CVMFS_HTTP_PROXY"}, "10000", "'http://"+srv.IP+":3128'")
	wantValue(t, res.Values["podman"], "podman_users",
		[]any{map[string]any{"name": "podman", "comment": "Used for running all containers", "home": "/var/lib/podman", "uid": "1001"}})

	site := appliancesite.New(t, appliancesite.Overrides, "fatimage")
	// a site's own cvmfs settings and podman users, in a file of its own
	// (the overrides environment's values are other tests' too)
	own := "cvmfs_config_overrides:\n  CVMFS_QUOTA_LIMIT: 20000\n  CVMFS_USE_GEOAPI: \"yes\"\n" +
		"podman_users:\n  - {name: podman, uid: 1001, home: /var/lib/podman}\n  - {name: containers, uid: 1500, home: /srv/containers}\n"
	if err := os.WriteFile(filepath.Join(site.Environment, "inventory", "group_vars", "all", "zz-site-cvmfs-podman.yml"), []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	res = resolveSite(ctx, t, site, tg, req)
	wantCvmfs(t, res, []string{"CVMFS_QUOTA_LIMIT", "CVMFS_HTTP_PROXY", "CVMFS_USE_GEOAPI"}, "20000", "'http://"+srv.IP+":3128'")
	wantValue(t, res.Values["podman"], "podman_users", []any{
		map[string]any{"name": "podman", "uid": 1001, "home": "/var/lib/podman"},
		map[string]any{"name": "containers", "uid": 1500, "home": "/srv/containers"}})
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
