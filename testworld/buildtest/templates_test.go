package buildtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestTemplatesParse parses every template the e2e builds lay out (the
// shared ones here and testdata's), without the lab: an attribute set
// twice or a variable declared twice (what a merge of two branches that
// each added the same one leaves) fails here in a second instead of in
// every lab build that uses the file.
func TestTemplatesParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "e2e", "testdata", "*.pkr.hcl"))
	if err != nil || len(files) < 10 {
		t.Fatalf("found %d templates in ../e2e/testdata (%v); there are more", len(files), err)
	}
	srcs := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs[f] = data
	}
	for name, data := range shared {
		srcs[name] = data
	}
	for name, data := range srcs {
		f, diags := hclsyntax.ParseConfig(data, name, hcl.InitialPos)
		if diags.HasErrors() {
			t.Errorf("%s: %s", name, diags.Error())
			continue
		}
		seen := map[string]bool{}
		for _, b := range f.Body.(*hclsyntax.Body).Blocks {
			if b.Type != "variable" || len(b.Labels) != 1 {
				continue
			}
			if seen[b.Labels[0]] {
				t.Errorf("%s: variable %q declared twice", name, b.Labels[0])
			}
			seen[b.Labels[0]] = true
		}
	}
}
