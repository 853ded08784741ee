package provtest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/provisioner/fatimage"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
)

// applianceEntry is an entry of image.json's "appliance" record.
type applianceEntry struct {
	Kind, Name, File, By, Phase string
	TasksFrom                   string  `json:"tasks_from"`
	Seconds                     float64 `json:"seconds"`
}

type applianceManifest struct {
	Image struct {
		Appliance struct {
			Commit, Environment string
			Native, Ansible     []applianceEntry
		} `json:"appliance"`
	} `json:"image"`
}

func findEntry(l []applianceEntry, kind, name string) *applianceEntry {
	for i := range l {
		if l[i].Kind == kind && l[i].Name == name {
			return &l[i]
		}
	}
	return nil
}

// gitHook is an environment hook recording whether git (which the
// build's native packages step installs) is installed when it runs.
func gitHook(t *testing.T, env, name string) {
	t.Helper()
	hook := `- name: Site hook ` + name + `
  hosts: builder
  become: true
  gather_facts: false
  tasks:
    - name: Is git installed yet
      ansible.builtin.command: rpm -q git
      register: fatimage_git
      failed_when: false
      changed_when: false
    - name: Record it
      ansible.builtin.copy:
        dest: /etc/fatimage-site-` + name + `
        content: "git {{ 'installed' if fatimage_git.rc == 0 else 'absent' }}\n"
        mode: "0644"
`
	if err := os.WriteFile(filepath.Join(env, "hooks", name+".yml"), []byte(hook), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestApplianceRolesLab provisions a lab VM from a site whose
// fatimage.yml gains a role the plugin does not know (site_marker) and
// whose environment has a post hook: the built-in groups do what the
// plugin does natively, the role and the hook run through the site's
// Ansible at their place (after the native installs, the hook before the
// role as fatimage.yml orders them, both before cleanup), their files
// are on the VM, and image.json lists both sides. Pre and post-bootstrap
// hooks of the environment (in the test's private copy) run before the
// repositories and after the native packages: each sees git absent, then
// installed. The same template
// with appliance_strict fails Prepare naming the role and the hook.
func TestApplianceRolesLab(t *testing.T) {
	ctx, srv, comm := labVM(t, "appliance-roles", 20*time.Minute)
	site := appliancesite.New(t, appliancesite.Overrides)
	appliancesite.AddToFatimage(t, site, appliancesite.SiteRolePlay)
	gitHook(t, site.Environment, "pre")
	gitHook(t, site.Environment, "post-bootstrap")
	manifest := filepath.Join(t.TempDir(), "manifest.json")
	raw := siteConfig(t, site)
	// the built-in groups of the build host's inventory groups
	// (builder, dnf_repos, kernel_modules): rebuild's role runs for
	// every build host
	raw["groups"] = []string{"always", "kernel_modules", "rebuild"}
	raw["manifest_output"] = manifest
	uiOut := provisionSite(ctx, t, srv, comm, raw)
	out := uiOut
	// the Ansible phases gave dnf.conf the build's repositories only
	// while they ran (docs/appliance-contract.md, Build-time proxy)
	if got := run(t, comm, "grep -c fatimage /etc/dnf/dnf.conf || true"); got != "0" {
		t.Errorf("dnf.conf keeps the phases' lines: %s", run(t, comm, "cat /etc/dnf/dnf.conf"))
	}
	// the site's role saw the build's snapshot repositories (baseos among
	// them), and no repository a package of the transaction added
	if got := run(t, comm, "cat /etc/fatimage-site-repos"); !strings.Contains(got, "baseos") || strings.Contains(got, "Extra Packages for Enterprise Linux") {
		t.Errorf("repositories the site's role saw:\n%s", got)
	}
	if got := run(t, comm, "sudo -n ls /run/fatimage-ansible-repos 2>&1; grep -c fatimage /etc/dnf/dnf.conf || true"); !strings.Contains(got, "No such file") || !strings.HasSuffix(got, "0") {
		t.Errorf("the Ansible phases' repositories left on the VM:\n%s", got)
	}
	if got := run(t, comm, "cat /etc/fatimage-site-role"); got != "site_marker Rocky" {
		t.Errorf("the site's role wrote %q", got)
	}
	if got := run(t, comm, "cat /etc/fatimage-site-hook"); got != appliancesite.Overrides {
		t.Errorf("the site's hook wrote %q", got)
	}
	for hook, want := range map[string]string{"pre": "git absent", "post-bootstrap": "git installed"} {
		if got := run(t, comm, "cat /etc/fatimage-site-"+hook); got != want {
			t.Errorf("the %s hook saw %q, want %q", hook, got, want)
		}
	}
	if !strings.Contains(out, "through Ansible (install phase): role site_marker in ansible/fatimage.yml: the plugin does not implement it") {
		t.Errorf("the build output does not say the role runs through Ansible:\n%s", out)
	}
	// fatimage.yml's order: the post hook, then the play added at its end;
	// both after the native installs and before cleanup
	order := []string{"fatimage: ansible: hook pre", "fatimage: repositories", "fatimage: packages",
		"fatimage: ansible: hook post-bootstrap", "fatimage: content (git", "fatimage: ansible: hook post (",
		"fatimage: ansible: role site_marker", "fatimage: cleanup"}
	last := -1
	for _, o := range order {
		i := strings.Index(out, o)
		if i <= last {
			t.Errorf("%q out of order (%v) in the build output:\n%s", o, order, out)
		}
		last = i
	}
	if strings.Contains(out, string(srv.PrivateKey)) {
		t.Error("the SSH key is in the build output")
	}

	var m applianceManifest
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	a := m.Image.Appliance
	// the test's copy of the checkout is no git work tree: no commit
	if filepath.Base(a.Environment) != appliancesite.Overrides || a.Commit != "" {
		t.Errorf("appliance record: environment %q, commit %q", a.Environment, a.Commit)
	}
	role := findEntry(a.Ansible, "role", "site_marker")
	if role == nil || role.File != "ansible/fatimage.yml" || role.Phase != "install" || role.Seconds <= 0 {
		t.Errorf("site_marker's record: %+v", role)
	}
	hook := findEntry(a.Ansible, "hook", "post")
	if hook == nil || hook.File != "environments/"+appliancesite.Overrides+"/hooks/post.yml" || hook.Seconds <= 0 {
		t.Errorf("the post hook's record: %+v", hook)
	}
	if len(a.Ansible) != 4 {
		t.Errorf("through Ansible: %+v, want the role and the three hooks only", a.Ansible)
	}
	for hook, phase := range map[string]string{"pre": "pre", "post-bootstrap": "bootstrap"} {
		if e := findEntry(a.Ansible, "hook", hook); e == nil || e.Phase != phase {
			t.Errorf("the %s hook's record: %+v, want phase %s", hook, e, phase)
		}
	}
	for name, by := range map[string]string{"dnf_repos": "step repos", "rebuild": "group rebuild"} {
		if e := findEntry(a.Native, "role", name); e == nil || e.By != by {
			t.Errorf("native record of %s: %+v, want by %q", name, e, by)
		}
	}

	raw["appliance_strict"] = true
	var strict fatimage.Provisioner
	err = strict.Prepare(raw)
	for _, want := range []string{"appliance_strict: role site_marker in ansible/fatimage.yml would run through Ansible",
		"appliance_strict: task Leave a mark in the image (ansible.builtin.copy) in " + filepath.Join(site.Environment, "hooks", "post.yml")} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("strict Prepare: %v\nwant %q", err, want)
		}
	}
}

// siteConfig is the fatimage configuration building from site with the
// lab's repositories and content servers (the built-in groups to add).
func siteConfig(t *testing.T, site *appliance.Site) map[string]any {
	// the overrides environment's dnf_repos_extra reads it
	t.Setenv("ARK_CONTENT_URL", theLab.Env["ARK_CONTENT_URL"])
	raw := labConfig(t)
	for k, v := range map[string]any{
		"appliance_dir": site.Repo, "appliance_environment": site.Environment,
		"appliance_roles_path": site.RolesPath, "appliance_collections_path": site.CollectionsPath,
		"git_base_url":     theLab.Env["LAB_GIT_URL"],
		"python_index_url": theLab.Env["LAB_PYPI_URL"], "python_index_insecure": true,
	} {
		raw[k] = v
	}
	return raw
}

// labConfig is the fatimage configuration building from the lab's
// repositories, with their credentials in the environment, keeping the
// VM reachable over SSH for the checks.
func labConfig(t *testing.T) map[string]any {
	t.Setenv("ARK_USERNAME", theLab.Env["ARK_USERNAME"])
	t.Setenv("ARK_PASSWORD", theLab.Env["ARK_PASSWORD"])
	return map[string]any{
		"repos": labRepos(t),
		"gpg_keys": []any{map[string]any{
			"path": "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9", "key": string(theLab.Repos.GPGKeyFiles["RPM-GPG-KEY-Rocky-9"]),
		}},
		"update":             false,
		"skip_cleanup_steps": []string{"ssh-host-keys", "login-ssh-keys", "resolv-conf"},
	}
}

// provisionSite runs the provisioner configured with raw on the lab VM
// and returns its output.
func provisionSite(ctx context.Context, t *testing.T, srv *labtest.Server, comm packersdk.Communicator, raw map[string]any) string {
	t.Helper()
	out, err := tryProvisionSite(ctx, t, srv, comm, raw)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out
}

// tryProvisionSite is provisionSite returning the provisioner's error.
func tryProvisionSite(ctx context.Context, t *testing.T, srv *labtest.Server, comm packersdk.Communicator, raw map[string]any) (string, error) {
	t.Helper()
	var p fatimage.Provisioner
	if err := p.Prepare(raw); err != nil {
		t.Fatal(err)
	}
	var uiOut logtail.Buffer
	ui := &packersdk.BasicUi{Writer: &uiOut, ErrorWriter: &uiOut}
	generated := map[string]any{"Host": srv.IP, "Port": 22, "User": lab.SSHUser, "SSHPrivateKey": string(srv.PrivateKey), "ConnType": "ssh"}
	err := p.Provision(ctx, ui, comm, generated)
	return uiOut.String(), err
}
