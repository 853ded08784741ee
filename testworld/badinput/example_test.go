package badinput

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// TestExampleSiteValidates runs `packer validate` on example/ as a
// switching site does, with its environment activated: appliance_dir and
// appliance_environment from APPLIANCES_REPO_ROOT and
// APPLIANCES_ENVIRONMENT_ROOT (a private tree of the real appliance, the
// site's overrides environment). The template is valid; with
// appliance_strict it is refused naming the environment's hook, which
// shows the site's appliance was read; and the lab's variables still
// validate in the same shell (example/lab.pkrvars.hcl clears both); the
// appliance's doca,cuda extra build of example/extra validates without
// vendor repositories. No network.
func TestExampleSiteValidates(t *testing.T) {
	p := packertest.Setup(t)
	n := newNetwork(t)
	site := appliancesite.New(t, appliancesite.Overrides)
	root, err := packertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(root, "example")
	dir := t.TempDir()
	env := append(n.env(dir), "ARK_USERNAME=site", "ARK_PASSWORD=s3cret",
		"APPLIANCES_REPO_ROOT="+site.Repo, "APPLIANCES_ENVIRONMENT_ROOT="+site.Environment)
	vars := []string{"-var", "flavor=general.v1.small", "-var", "source_image_name=Rocky-9-GenericCloud-Base-9.8",
		"-var", `appliance_roles_path=["` + site.RolesPath[0] + `"]`, "-var", `appliance_collections_path=["` + site.CollectionsPath[0] + `"]`}
	validateDir := func(tmpl string, args ...string) (int, string) {
		r := p.Run(t, dir, env, append(append([]string{"validate"}, args...), tmpl)...)
		if strings.Contains(r.Output(), "s3cret") {
			t.Errorf("packer validate %q shows the password:\n%s", args, r.Output())
		}
		return r.ExitCode, strings.Join(strings.Fields(r.Output()), " ")
	}
	validate := func(args ...string) (int, string) { return validateDir(example, args...) }
	if code, out := validate(vars...); code != 0 || !strings.Contains(out, "The configuration is valid.") {
		t.Errorf("example/ on the site's appliance (exit %d):\n%s", code, out)
	}
	hook := "in " + filepath.Join(site.Environment, "hooks", "post.yml") + " would run through Ansible"
	if code, out := validate(append(vars, "-var", "appliance_strict=true")...); code == 0 || !strings.Contains(out, hook) {
		t.Errorf("example/ with appliance_strict (exit %d) does not name the site's hook (%q):\n%s", code, hook, out)
	}
	// the appliance's extra build: its vendor repositories come from the
	// site's variables at build time, so none is named here
	if code, out := validateDir(filepath.Join(example, "extra"), append(vars, "-var", "extra_inventory_groups=doca,cuda")...); code != 0 || !strings.Contains(out, "The configuration is valid.") {
		t.Errorf("example/extra doca,cuda on the site's appliance (exit %d):\n%s", code, out)
	}
	if code, out := validate("-var-file", filepath.Join(example, "lab.pkrvars.hcl")); code != 0 {
		t.Errorf("example/ with the lab's variables in an activated shell (exit %d):\n%s", code, out)
	}
	n.requireQuiet(t)
}
