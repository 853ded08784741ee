package fatimage

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

// installScript is k's script installing items, for a kind staging no
// files.
func installScript[T any](t *testing.T, k content.Kind[T], items []T) *vmScript {
	t.Helper()
	cs, err := k.Install(content.Env{WorkDir: "/w"}, items)
	if err != nil || len(cs.Staged) > 0 {
		t.Fatalf("install: %v, %d staged", err, len(cs.Staged))
	}
	return kindScript(k, cs)
}

// Every content kind of the step table is checked and merged at Prepare
// and its shell is valid sh as the provisioner sends it.
func TestContentKinds(t *testing.T) {
	kinds := contentKinds()
	if len(kinds) == 0 {
		t.Fatal("no content kind in the step table")
	}
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k.option()] {
			t.Errorf("kind %s twice in the step table", k.option())
		}
		seen[k.option()] = true
		cmd := exec.Command("sh", "-n")
		cmd.Stdin = strings.NewReader(newScript("kind-"+k.option()).render("/tmp/w", "rocky"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v: %s", k.option(), err, out)
		}
	}
}
