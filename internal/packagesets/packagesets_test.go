package packagesets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The provisioner's docs show the package sets as shipped.
func TestDocsShowPackageSets(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "provisioners", "fatimage.mdx"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```yaml\n"+string(packageSetsYAML)+"```") {
		t.Error("docs/provisioners/fatimage.mdx does not show package_sets.yaml as it is; copy it in")
	}
}
