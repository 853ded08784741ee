package badinput

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// reHCLBlock is a fenced HCL block of a docs page, indented or not (a
// block inside a list item is indented with the item's text).
var reHCLBlock = regexp.MustCompile("(?ms)^([ \t]*)```hcl\n(.*?)^([ \t]*)```$")

// hclBlocks are the HCL blocks of a page, each without its fence's indent.
func hclBlocks(page string) []string {
	var blocks []string
	for _, m := range reHCLBlock.FindAllStringSubmatch(page, -1) {
		lines := strings.Split(m[2], "\n")
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, m[1])
		}
		blocks = append(blocks, strings.Join(lines, "\n"))
	}
	return blocks
}

// docPages are the pages whose HCL a user copies: the README and every
// page under docs/.
func docPages(t *testing.T, root string) []string {
	t.Helper()
	pages := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".mdx")) {
			pages = append(pages, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// TestDocsHCLFormatted holds every HCL block of the README and the docs
// to what `packer fmt` writes, as a site copies them into its templates.
func TestDocsHCLFormatted(t *testing.T) {
	p := packertest.Setup(t)
	n := newNetwork(t)
	root, err := packertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, path := range docPages(t, root) {
		page, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		for i, b := range hclBlocks(string(page)) {
			total++
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "example.pkr.hcl"), []byte(b), 0o600); err != nil {
				t.Fatal(err)
			}
			if r := p.Run(t, dir, n.env(dir), "fmt", "-check", "-diff", "."); r.ExitCode != 0 {
				t.Errorf("HCL block %d of %s is not as `packer fmt` writes it (exit %d):\n%s\n%s", i+1, rel, r.ExitCode, b, r.Output())
			}
		}
	}
	// the provisioner page alone has seven; a broken fence regexp finds none
	if total < 15 {
		t.Fatalf("%d HCL blocks in the README and docs/; the fence pattern misses some", total)
	}
	n.requireQuiet(t)
}

// TestProvisionerPageExamples holds the provisioner page's first HCL
// block, its minimal example, to a whole template that `packer validate`
// accepts (with the appliance's pins file beside it, as the example reads
// it, and Ark's credentials in the environment) without any network call.
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
	blocks := hclBlocks(string(page))
	if len(blocks) < 5 {
		t.Fatalf("%d HCL blocks on the provisioner page; want its example and the sections' snippets", len(blocks))
	}

	example := blocks[0]
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
