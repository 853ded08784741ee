package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/buildtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// TestApplianceRolesBuild: packer builds from a site whose fatimage.yml
// gains a role the plugin does not know and whose environment has a post
// hook; the image holds both files they write and its image.json lists
// them as run through Ansible. packer validate of the same template with
// appliance_strict fails naming the role and the hook's task with their
// files.
func TestApplianceRolesBuild(t *testing.T) {
	labtest.Require(t)
	site := appliancesite.New(t, appliancesite.Overrides)
	appliancesite.AddToFatimage(t, site, appliancesite.SiteRolePlay)
	name := fmt.Sprintf("e2e-appliance-%d", time.Now().Unix())
	manifest := filepath.Join(t.TempDir(), "manifest.json")
	list := func(l []string) string { data, _ := json.Marshal(l); return string(data) }
	vars := []string{"-var", "image_name=" + name, "-var", "manifest_output=" + manifest,
		"-var", "appliance_dir=" + site.Repo, "-var", "appliance_environment=" + site.Environment,
		"-var", "appliance_roles_path=" + list(site.RolesPath), "-var", "appliance_collections_path=" + list(site.CollectionsPath)}

	p := packertest.Setup(t)
	dir := t.TempDir()
	buildtest.Layout(t, dir, "testdata", buildtest.FatCommonName, "fat-appliance.pkr.hcl")
	v := p.Run(t, dir, theLab.Environ(), append(append([]string{"validate"}, vars...), "-var", "appliance_strict=true", ".")...)
	hook := filepath.Join(site.Environment, "hooks", "post.yml")
	for _, want := range []string{"appliance_strict: role site_marker in ansible/fatimage.yml would run through Ansible",
		"appliance_strict: task Leave a mark in the image (ansible.builtin.copy) in " + hook + " would run through Ansible"} {
		// packer wraps its error lines
		if v.ExitCode == 0 || !strings.Contains(strings.Join(strings.Fields(v.Output()), " "), want) {
			t.Errorf("strict validate (exit %d) lacks %q:\n%s", v.ExitCode, want, v.Output())
		}
	}

	r := p.Run(t, dir, theLab.Environ(), append(append([]string{"build"}, vars...), ".")...)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	out := r.Output()
	for _, want := range []string{"fatimage: ansible: hook post (" + hook + ")", "fatimage: ansible: role site_marker in ansible/fatimage.yml",
		"native: role rebuild (tasks_from install.yml) in ansible/fatimage.yml: group rebuild"} {
		if !strings.Contains(out, want) {
			t.Errorf("build output lacks %q:\n%s", want, out)
		}
	}
	img := findImage(t, name)
	labtest.RequireClean(t, theLab)
	root := imageFiles(t, img.ID)
	for file, want := range map[string]string{"etc/fatimage-site-role": "site_marker Rocky\n", "etc/fatimage-site-hook": appliancesite.Overrides + "\n"} {
		if got, err := os.ReadFile(filepath.Join(root, file)); err != nil || string(got) != want {
			t.Errorf("/%s in the image: %q, %v; want %q", file, got, err, want)
		}
	}
	var info struct {
		Appliance struct {
			Ansible []struct{ Kind, Name, File, Phase string } `json:"ansible"`
			Native  []struct{ Kind, Name, By string }          `json:"native"`
		} `json:"appliance"`
	}
	data, err := os.ReadFile(filepath.Join(root, "var/lib/image/image.json"))
	if err == nil {
		err = json.Unmarshal(data, &info)
	}
	if err != nil {
		t.Fatalf("image.json: %v", err)
	}
	got := fmt.Sprint(info.Appliance.Ansible)
	if want := "[{hook post environments/overrides/hooks/post.yml install} {role site_marker ansible/fatimage.yml install}]"; got != want {
		t.Errorf("image.json appliance.ansible %s, want %s", got, want)
	}
	if len(info.Appliance.Native) < 5 {
		t.Errorf("image.json appliance.native: %+v", info.Appliance.Native)
	}
}
