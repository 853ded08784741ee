package fatimage

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclparse"
)

func clearArkEnv(t *testing.T) {
	t.Setenv("ARK_USERNAME", "")
	t.Setenv("ARK_PASSWORD", "")
}

// stateOf is a run's state over c, a Config built by hand, with c's own
// options as the plan (no groups, no repositories).
func stateOf(c *Config) *state {
	p := &plan{cfg: c, sets: &resolved{}, ContentOptions: *c.templateContent(), update: c.Update == nil || *c.Update}
	return &state{cfg: c, plan: p}
}

func goodRepo() map[string]any {
	return map[string]any{
		"name": "baseos", "repo_file": "rocky", "repo_name": "baseos",
		"baseurl": "https://ark.example/pulp/content/rocky/9.6/BaseOS/x86_64/os/20251106T211545", "gpgcheck": true,
	}
}

func TestPrepareDefaults(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	if err := p.Prepare(map[string]any{"repos": []any{goodRepo()}}); err != nil {
		t.Fatal(err)
	}
	c := p.config
	if !*c.ReplaceRepos || !p.plan.update || !*c.Cleanup || !*c.DisableRepos {
		t.Error("bool defaults")
	}
	if c.Reboot != "auto" || c.RebootTimeout != 10*time.Minute || c.SELinux != "disabled" {
		t.Errorf("defaults %q %s %q", c.Reboot, c.RebootTimeout, c.SELinux)
	}
	if strings.Join(c.UpdateExclude, ",") != "grafana,apptainer" {
		t.Errorf("update_exclude %v", c.UpdateExclude)
	}
	if !*p.plan.repos[0].Enabled || !p.plan.repos[0].GPGCheck {
		t.Error("repo defaults")
	}
}

func TestPrepareEnvCredentials(t *testing.T) {
	t.Setenv("ARK_USERNAME", "u")
	t.Setenv("ARK_PASSWORD", "s3cret")
	var p Provisioner
	if err := p.Prepare(map[string]any{"repos": []any{goodRepo()}}); err != nil {
		t.Fatal(err)
	}
	if p.plan.repoUsername != "u" || p.plan.repoPassword != "s3cret" {
		t.Errorf("credentials %q", p.plan.repoUsername)
	}
}

func TestPrepareValidation(t *testing.T) {
	clearArkEnv(t)
	src := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(src, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := func(k string, v any) []any {
		r := goodRepo()
		if v == nil {
			delete(r, k)
		} else {
			r[k] = v
		}
		return []any{r}
	}
	user := func(m map[string]any) []any { return []any{m} }
	cases := []struct {
		name string
		raw  map[string]any
		want string
	}{
		{"reboot value", map[string]any{"reboot": "sometimes"}, `reboot: "sometimes" is not one of auto, always, never`},
		{"selinux value", map[string]any{"selinux": "strict"}, `selinux: "strict" is not one of enforcing, permissive, disabled, unchanged`},
		{"repo without baseurl", map[string]any{"repos": repo("baseurl", nil)}, "repos[0]: baseurl is required"},
		{"repo bad scheme", map[string]any{"repos": repo("baseurl", "ftp://x/y")}, `repos[0]: baseurl "ftp://x/y" must start with`},
		{"repo bad file", map[string]any{"repos": repo("repo_file", "../etc/passwd")}, `repos[0]: repo_file "../etc/passwd" must be a plain file name`},
		{"repo no name", map[string]any{"repos": repo("repo_name", "")}, `repos[0]: repo_name "" must be a non-empty section name`},
		{"repo duplicate", map[string]any{"repos": []any{goodRepo(), goodRepo()}}, "repos[1]: duplicate section [baseos] in rocky.repo"},
		{"repo priority", map[string]any{"repos": repo("priority", 120)}, "repos[0]: priority 120 must be between 1 and 99"},
		{"repo enabled not a bool", map[string]any{"repos": repo("enabled", "maybe"), "reboot": "x"}, `repos[0]: cannot parse 'enabled' as bool`},
		{"repo reserved option", map[string]any{"repos": repo("password", "x")}, `repos[0]: options key "password" is not allowed`},
		{"username without password", map[string]any{"repos": []any{goodRepo()}, "repo_username": "u"}, "repo_password: must be set when repo_username is set"},
		{"password without username", map[string]any{"repos": []any{goodRepo()}, "repo_password": "lonely-password"}, "repo_username: must be set when repo_password is set"},
		{"unknown group", map[string]any{"groups": []string{"nosuch"}}, `groups: unknown group "nosuch" (known groups: `},
		{"missing uid", map[string]any{"users": user(map[string]any{"name": "slurm"})}, "users[0]: uid is required (a fixed id between 1 and 65533)"},
		{"negative uid", map[string]any{"users": user(map[string]any{"name": "slurm", "uid": -4})}, "users[0]: uid -4 must be between 1 and 65533"},
		{"reboot_timeout negative", map[string]any{"reboot_timeout": "-5s"}, "reboot_timeout: must be positive, got -5s"},
		{"binary without name", map[string]any{"binaries": []any{map[string]any{"version": "1.0.0"}}}, "binaries[0]: name is required"},
		{"uid too big", map[string]any{"users": user(map[string]any{"name": "slurm", "uid": 70000})}, "users[0]: uid 70000 must be between 1 and 65533"},
		{"duplicate user", map[string]any{"users": []any{map[string]any{"name": "slurm", "uid": 202}, map[string]any{"name": "slurm", "uid": 203}}}, `users[1]: duplicate user "slurm"`},
		{"duplicate uid", map[string]any{"users": []any{map[string]any{"name": "a", "uid": 202}, map[string]any{"name": "b", "uid": 202}}}, `users[1]: uid 202 already used by "a"`},
		{"bad user name", map[string]any{"users": user(map[string]any{"name": "Bad Name", "uid": 5})}, `users[0]: name "Bad Name" is not a valid user name`},
		{"gid without group", map[string]any{"users": user(map[string]any{"name": "a", "uid": 5, "gid": 7})}, "users[0]: gid needs group"},
		{"primary_group without group", map[string]any{"users": user(map[string]any{"name": "a", "uid": 5, "primary_group": false})}, "users[0]: primary_group = false needs group (the group made on its own)"},
		{"relative home", map[string]any{"users": user(map[string]any{"name": "a", "uid": 5, "home": "var/a"})}, `users[0]: home "var/a" must be absolute`},
		{"gpg key relative path", map[string]any{"gpg_keys": []any{map[string]any{"path": "RPM-GPG-KEY"}}}, `gpg_keys[0]: path "RPM-GPG-KEY" must be absolute`},
		{"gpg key not armored", map[string]any{"gpg_keys": []any{map[string]any{"path": "/etc/pki/rpm-gpg/K", "key": "junk"}}}, "gpg_keys[0]: key must be an armored PGP public key block"},
		{"bad package", map[string]any{"packages": []string{"-rf"}}, `packages[0]: "-rf" is not a valid package name or spec`},
		{"bad remove package", map[string]any{"remove_packages": []string{"a;b"}}, `remove_packages[0]: "a;b" is not a valid package name or spec`},
		{"file missing source", map[string]any{"files": []any{map[string]any{"source": "/nonexistent/x", "destination": "/etc/x"}}}, "files[0]: source: stat /nonexistent/x"},
		{"file relative destination", map[string]any{"files": []any{map[string]any{"source": src, "destination": "etc/x"}}}, `files[0]: destination "etc/x" must be absolute`},
		{"file bad mode", map[string]any{"files": []any{map[string]any{"source": src, "destination": "/etc/x", "mode": "rwx"}}}, `files[0]: mode "rwx" must be octal`},
		{"file bad owner", map[string]any{"files": []any{map[string]any{"source": src, "destination": "/etc/x", "owner": "a:b:c"}}}, `files[0]: owner "a:b:c" must be user or user:group`},
		{"unknown cleanup step", map[string]any{"skip_cleanup_steps": []string{"everything"}}, `skip_cleanup_steps[0]: unknown step "everything" (known: dnf-clean`},
		{"execute_command without path", map[string]any{"execute_command": "sudo sh"}, "execute_command: must contain {{.Path}}"},
		{"unknown key", map[string]any{"no_such_option": true}, "unknown configuration key: '\"no_such_option\"'"},
		{"bad module stream", map[string]any{"module_streams": []string{"nodejs 22"}}, `module_streams[0]: "nodejs 22" must be name:stream`},
		{"enable_repos bad id", map[string]any{"enable_repos": []string{"a b"}}, `enable_repos[0]: "a b" is not a valid repo id`},
		{"grafana plugin without version", map[string]any{"grafana_plugins": []string{"grafana-opensearch-datasource"}}, `grafana_plugins[0]: "grafana-opensearch-datasource" must be "<plugin id> <version>"`},
		{"disable_services bad unit", map[string]any{"disable_services": []string{"slurmd; rm"}}, `disable_services[0]: "slurmd; rm" is not a valid unit name`},
		{"login_home relative", map[string]any{"login_home": "var/lib/rocky"}, `login_home: "var/lib/rocky" must be absolute`},
		{"login_home root", map[string]any{"login_home": "/"}, `login_home: "/" is the root directory`},
		{"Ark repo without credentials", map[string]any{"repos": repo("baseurl", "https://ark.stackhpc.com/pulp/content/rocky/9.6/BaseOS/x86_64/os/20251106T211545")}, "repos[0]: https://ark.stackhpc.com/pulp/content/rocky/9.6/BaseOS/x86_64/os/20251106T211545 needs credentials; set repo_username and repo_password (or ARK_USERNAME and ARK_PASSWORD)"},
		{"built-in uid clash", map[string]any{"groups": []string{"openhpc"}, "users": user(map[string]any{"name": "munge", "uid": 202})}, `users[0]: uid 202 already used by "slurm"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p Provisioner
			err := p.Prepare(tc.raw)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestGroupsResolve(t *testing.T) {
	r, err := resolveGroups([]string{"control", "compute"}, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.NoWeakDeps, "slurm-slurmctld-ohpc") || !slices.Contains(r.Packages, "epel-release") || !slices.Contains(r.Remove, "cockpit-ws") {
		t.Errorf("install %v remove %v", r.Packages, r.Remove)
	}
	seen := map[string]bool{}
	for _, p := range r.Packages {
		if seen[p] {
			t.Errorf("duplicate %s", p)
		}
		seen[p] = true
	}
	// control brings grafana: its repo, plugin, user and service
	if !slices.Contains(r.Packages, "grafana-10.4.18") || !slices.Contains(r.Packages, "chkconfig") || !slices.Contains(r.Remove, "grafana-data") || strings.Join(r.EnableRepos, ",") != "grafana" ||
		strings.Join(r.GrafanaPlugins, ",") != "grafana-opensearch-datasource 2.8.1" || !slices.Contains(r.Services, "grafana-server") {
		t.Errorf("grafana %+v", r.Set)
	}
	var users []string
	for _, u := range r.users {
		users = append(users, fmt.Sprintf("%s:%d:%s:%d:%s", u.Name, u.UID, u.Group, u.GID, u.primaryGroup()))
	}
	// prometheus and grafana: their groups made apart, as the appliance's
	// appliances_local_users entries make them
	if got := strings.Join(users, ","); got != "slurm:202::0:,node-exp:975:node-exp:975:node-exp,prometheus:981:prometheus:976:,alertmanager:974:alertmanager:974:alertmanager,grafana:984:grafana:979:" {
		t.Errorf("users %s", got)
	}
	fat, err := resolveGroups([]string{"fatimage"}, nil, nil, "")
	// OnDemand's module streams are profiles installed in the one
	// transaction (no `dnf module enable` process of their own)
	if err != nil || len(fat.Modules) != 0 {
		t.Errorf("modules %v %v", fat.Modules, err)
	}
	for _, p := range []string{"podman", "@Xfce", "python312", "@nodejs:22/common", "@ruby:3.3/common", "ondemand-4.1.4", "turbovnc-3.0.1", "R"} {
		if !slices.Contains(fat.Packages, p) {
			t.Errorf("fatimage lacks %s", p)
		}
	}
	if len(fat.users) != 7 || !slices.Contains(fat.Services, "firewalld") || !slices.Contains(fat.Services, "slurmd") {
		t.Errorf("fatimage users %v services %v", fat.users, fat.Services)
	}
	// an extra build's feature group brings only its own packages
	nfs, _ := resolveGroups([]string{"nfs"}, nil, nil, "")
	if strings.Join(nfs.Packages, ",") != "nfs-utils" || len(nfs.users)+len(nfs.binaries)+len(nfs.Remove) != 0 {
		t.Errorf("nfs %+v", nfs)
	}
}

func TestUsersMergeWithBuiltins(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	err := p.Prepare(map[string]any{"groups": []string{"openhpc"}, "users": []any{
		map[string]any{"name": "slurm", "uid": 450, "system": true},
		map[string]any{"name": "alice", "uid": 2000},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.plan.users) != 2 || p.plan.users[0].UID != 450 || p.plan.users[1].Name != "alice" {
		t.Errorf("users %+v", p.plan.users)
	}
	err = p.Prepare(map[string]any{"groups": []string{"openhpc"}, "users": []any{map[string]any{"name": "bob", "uid": 202}}})
	if err == nil || !strings.Contains(err.Error(), `users[0]: uid 202 already used by "slurm"`) {
		t.Errorf("clash with a built-in: %v", err)
	}
}

// `repos` is an attribute taking a list of objects, the data source's
// output, with only the data source's fields or with the optional ones.
func TestConfigSpecDecodesReposList(t *testing.T) {
	clearArkEnv(t)
	src := `
repos = [
  { name = "baseos", repo_file = "rocky", repo_name = "baseos",
    baseurl = "https://ark.example/pulp/content/rocky/9.6/BaseOS/x86_64/os/20251106T211545",
    path = "rocky/9.6/BaseOS/x86_64/os", timestamp = "20251106T211545", gpgcheck = true },
  { name = "epel", repo_file = "epel", repo_name = "epel",
    baseurl = "https://ark.example/pulp/content/epel/9/Everything/x86_64/20251106T000000",
    gpgcheck = false, priority = 10, module_hotfixes = true, enabled = false, skip_if_unavailable = "1" },
]
repo_username = "user"
repo_password = "s3cret"
groups = ["openhpc", "grafana"]
packages = ["htop"]
reboot = "never"
reboot_timeout = "5m"
users {
  name = "slurm"
  uid = 202
  home = "/etc/slurm"
  shell = "/sbin/nologin"
  system = true
}
gpg_keys {
  path = "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9"
}
`
	f, diags := hclparse.NewParser().ParseHCL([]byte(src), "t.pkr.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var p Provisioner
	val, diags := hcldec.Decode(f.Body, p.ConfigSpec(), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if err := p.Prepare(val); err != nil {
		t.Fatal(err)
	}
	c := p.config
	if len(p.plan.repos) != 2 {
		t.Fatalf("repos %+v", p.plan.repos)
	}
	r0, r1 := p.plan.repos[0], p.plan.repos[1]
	if r0.RepoFile != "rocky" || !r0.GPGCheck || r0.Timestamp != "20251106T211545" || !*r0.Enabled {
		t.Errorf("repo 0 %+v", r0)
	}
	if r1.GPGCheck || r1.Priority != 10 || !r1.ModuleHotfixes || *r1.Enabled || r1.Options["skip_if_unavailable"] != "1" {
		t.Errorf("repo 1 %+v", r1)
	}
	if c.RepoPassword != "s3cret" || c.Reboot != "never" || c.RebootTimeout != 5*time.Minute {
		t.Errorf("config %+v", c)
	}
	if len(c.Users) != 1 || c.Users[0].UID != 202 || !c.Users[0].System || len(c.GPGKeys) != 1 {
		t.Errorf("users %+v keys %+v", c.Users, c.GPGKeys)
	}
}

// A repo missing a required attribute fails validation, naming it.
func TestConfigSpecReposMissingAttr(t *testing.T) {
	clearArkEnv(t)
	src := `repos = [{ name = "x", repo_file = "x", repo_name = "x" }]`
	f, _ := hclparse.NewParser().ParseHCL([]byte(src), "t.pkr.hcl")
	var p Provisioner
	val, diags := hcldec.Decode(f.Body, p.ConfigSpec(), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if err := p.Prepare(val); err == nil || !strings.Contains(err.Error(), "repos[0]: baseurl is required") {
		t.Fatalf("got %v", err)
	}
}

// A full provisioner body (testdata/provisioner-body.hcl) decodes and validates.
func TestExampleBody(t *testing.T) {
	clearArkEnv(t)
	src, err := os.ReadFile(filepath.Join("testdata", "provisioner-body.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	f, diags := hclparse.NewParser().ParseHCL(src, "provisioner-body.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var p Provisioner
	val, diags := hcldec.Decode(f.Body, p.ConfigSpec(), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if err := p.Prepare(val); err != nil {
		t.Fatal(err)
	}
	c := p.config
	if len(p.plan.repos) != 2 || len(c.Users) != 2 || len(p.plan.binaries) != 3 || c.RebootTimeout != 15*time.Minute || p.plan.binaries[2].Files[1] != "amtool" {
		t.Errorf("config %+v", c)
	}
}

// Leaving the repositories enabled with credentials is said out loud.
func TestCredentialsLeftWarning(t *testing.T) {
	clearArkEnv(t)
	for _, tc := range []struct {
		raw  map[string]any
		warn bool
	}{
		{map[string]any{"repos": []any{goodRepo()}, "repo_username": "u", "repo_password": "left-behind-password", "disable_repos": false}, true},
		{map[string]any{"repos": []any{goodRepo()}, "repo_username": "u", "repo_password": "left-behind-password"}, false},
		{map[string]any{"repos": []any{goodRepo()}, "disable_repos": false}, false},
	} {
		var p Provisioner
		if err := p.Prepare(tc.raw); err != nil {
			t.Fatal(err)
		}
		if got := p.plan.credentialsLeftWarning(); (got != "") != tc.warn || (tc.warn && !strings.Contains(got, "disable_repos = false leaves the repository credentials")) {
			t.Errorf("%v: %q", tc.raw, got)
		}
	}
}
