package badinput

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// reHCLBlock is a fenced HCL block of a docs page.
var reHCLBlock = regexp.MustCompile("(?s)```hcl\n(.*?)```")

// TestProvisionerPageExamples holds the provisioner page's examples to
// what a site copies: every HCL block is as `packer fmt` writes it, and
// the first, the page's minimal example, is a whole template that
// `packer validate` accepts (with the appliance's pins file beside it, as
// the example reads it, and Ark's credentials in the environment) without
// any network call.
func TestProvisionerPageExamples(t *testing.T) {
	p := packertest.Setup(t)
	n := newNetwork(t)
	root, err := packertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "provisioners", "fatimage.mdx"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := reHCLBlock.FindAllStringSubmatch(string(page), -1)
	if len(blocks) < 5 {
		t.Fatalf("%d HCL blocks on the provisioner page; want its example and the sections' snippets", len(blocks))
	}
	for i, b := range blocks {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "example.pkr.hcl"), []byte(b[1]), 0o600); err != nil {
			t.Fatal(err)
		}
		if r := p.Run(t, dir, n.env(dir), "fmt", "-check", "-diff", "."); r.ExitCode != 0 {
			t.Errorf("HCL block %d of the provisioner page is not as `packer fmt` writes it (exit %d):\n%s\n%s", i+1, r.ExitCode, b[1], r.Output())
		}
	}

	example := blocks[0][1]
	if !strings.Contains(example, `provisioner "fatimage"`) || !strings.Contains(example, "repos  = data.fatimage-ark.") {
		t.Fatalf("the page's first HCL block is not a template whose provisioner takes the data source's repos:\n%s", example)
	}
	dir := t.TempDir()
	pins, err := os.ReadFile(filepath.Join(root, "example", "dnf_repo_timestamps.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"example.pkr.hcl": []byte(example), "dnf_repo_timestamps.yml": pins} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Ark's credentials from the environment, as the page says
	env := append(n.env(dir), "ARK_USERNAME=site", "ARK_PASSWORD=s3cret")
	r := p.Run(t, dir, env, "validate", ".")
	if r.ExitCode != 0 || !strings.Contains(r.Output(), "The configuration is valid.") {
		t.Errorf("packer validate refused the provisioner page's example (exit %d):\n%s", r.ExitCode, r.Output())
	}
	if strings.Contains(r.Output(), "s3cret") {
		t.Errorf("output shows the password:\n%s", r.Output())
	}
	n.requireQuiet(t)
}
