package fatimage

import (
	"os/exec"
	"strings"
	"testing"
)

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
