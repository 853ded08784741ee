package fatimage

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

func strictRaw(s *appliance.Site, groups ...string) map[string]any {
	return map[string]any{"appliance_dir": s.Repo, "appliance_environment": s.Environment, "appliance_strict": true,
		"appliance_roles_path": s.RolesPath, "appliance_collections_path": s.CollectionsPath,
		"inventory_groups": strings.Join(s.Groups, ","), "groups": groups}
}

// siteBuiltins are the built-in groups among the site's host groups, as
// inventory mode installs them.
func siteBuiltins(t *testing.T, s *appliance.Site) []string {
	t.Helper()
	groups, err := s.StaticGroups()
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"always"} // builder's
	for _, g := range groups {
		if slices.Contains(builtinSetNames(), g) {
			out = append(out, g)
		}
	}
	return out
}

func strictErrors(t *testing.T, raw map[string]any) []string {
	t.Helper()
	var c Config
	_, err := c.prepare(raw)
	if err == nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if strings.Contains(l, "appliance_strict") {
			out = append(out, strings.TrimPrefix(strings.TrimSpace(l), "* "))
		}
	}
	return out
}

// notNative are the steps of the appliance's fat build on its .stackhpc
// environment that the plugin does not do: CI's extra groups etc_hosts
// and cacerts.
var notNative = []string{
	"appliance_strict: role etc_hosts in ansible/bootstrap.yml would run through Ansible (the plugin does not implement it)",
	"appliance_strict: role cacerts in ansible/bootstrap.yml would run through Ansible (the plugin does not implement it)",
}

// TestApplianceStrict: of the appliance's own fat build, with the
// built-in groups of its inventory, only CI's etc_hosts and cacerts are
// not native; a role the site adds to fatimage.yml, a site hook, and a
// role whose built-in group the build leaves out each fail packer
// validate, named with their file.
func TestApplianceStrict(t *testing.T) {
	stock := appliancesite.New(t, ".stackhpc", "fatimage")
	if errs := strictErrors(t, strictRaw(stock, siteBuiltins(t, stock)...)); !slices.Equal(errs, notNative) {
		t.Errorf("the appliance's fat build under strict:\n%s\nwant\n%s", strings.Join(errs, "\n"), strings.Join(notNative, "\n"))
	}

	site := appliancesite.New(t, appliancesite.Overrides, "fatimage")
	appliancesite.AddToFatimage(t, site, appliancesite.SiteRolePlay)
	errs := strings.Join(strictErrors(t, strictRaw(site, siteBuiltins(t, site)...)), "\n")
	hook := filepath.Join(site.Environment, "hooks", "post.yml")
	for _, want := range []string{
		"appliance_strict: role site_marker in ansible/fatimage.yml would run through Ansible (the plugin does not implement it)",
		"appliance_strict: task Leave a mark in the image (ansible.builtin.copy) in " + hook + " would run through Ansible (the environment's hook)",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("strict errors lack %q:\n%s", want, errs)
		}
	}
	if strings.Count(errs, "\n") != 3 {
		t.Errorf("strict errors: want the two above and etc_hosts and cacerts only:\n%s", errs)
	}

	// a condition only Ansible decides: the step counts as running
	cond := appliancesite.New(t, ".stackhpc", "fatimage")
	appliancesite.AddToFatimage(t, cond, strings.Replace(appliancesite.SiteRolePlay, "name: site_marker", "name: site_marker\n      when: site_marker_enabled | default(false)", 1))
	errs = strings.Join(strictErrors(t, strictRaw(cond, siteBuiltins(t, cond)...)), "\n")
	if !strings.Contains(errs, "appliance_strict: role site_marker in ansible/fatimage.yml may run through Ansible (the plugin does not implement it; its host pattern or condition needs Ansible to decide") {
		t.Errorf("strict errors of a conditional site role:\n%s", errs)
	}

	// groups the template names add to the inventory's, never replace
	// them: a build naming only control still installs openondemand
	thin := appliancesite.New(t, ".stackhpc", "fatimage")
	if errs := strictErrors(t, strictRaw(thin, "control")); !slices.Equal(errs, notNative) {
		t.Errorf("strict errors of a build naming control only:\n%s", strings.Join(errs, "\n"))
	}
}

// TestApplianceStrictExtraBuilds: the appliance's extra builds (its
// extra.yml's groups doca,cuda and doca,cuda,lustre, on the extra site
// environment, whose cuda hosts recompile Slurm) under strict name only
// the roles that run through the site's Ansible by design (site_role):
// slurm_recompile, and lustre's install.yml. The rebuild role's install,
// which fatimage.yml runs on every build host, is not named: the build
// adds the group rebuild for it and does it natively.
func TestApplianceStrictExtraBuilds(t *testing.T) {
	recompile := "appliance_strict: role slurm_recompile in ansible/fatimage.yml would run through Ansible (with the site's appliance its role slurm_recompile does group slurm_recompile's work: it builds from the build VM's own state)"
	lustre := "appliance_strict: role lustre (tasks_from install.yml) in ansible/fatimage.yml would run through Ansible (with the site's appliance its role lustre does group lustre's work: it builds from the build VM's own state)"
	for groups, want := range map[string][]string{
		"doca,cuda":        {recompile},
		"doca,cuda,lustre": {lustre, recompile},
	} {
		site := appliancesite.New(t, appliancesite.Extra, strings.Split(groups, ",")...)
		if errs := strictErrors(t, strictRaw(site, siteBuiltins(t, site)...)); !slices.Equal(errs, want) {
			t.Errorf("%s under strict:\n%s\nwant\n%s", groups, strings.Join(errs, "\n"), strings.Join(want, "\n"))
		}
	}
}
