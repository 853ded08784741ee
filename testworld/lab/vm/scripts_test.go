package vm

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGuestScriptsShellcheck runs shellcheck over every shell script that
// boots or runs in a VM. It fails, not skips, without shellcheck
// (scripts/deps.sh installs it).
func TestGuestScriptsShellcheck(t *testing.T) {
	scripts, err := filepath.Glob("guest/*.sh")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no guest scripts found: %v", err)
	}
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Fatal("shellcheck is not installed (apt-get install shellcheck; see scripts/deps.sh)")
	}
	out, err := exec.Command(sc, append([]string{"--severity=info"}, scripts...)...).CombinedOutput()
	if err != nil {
		t.Errorf("shellcheck %v: %v\n%s", scripts, err, out)
	}
}
