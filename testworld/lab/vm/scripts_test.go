package vm

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGuestScriptsShellcheck runs shellcheck over every shell script that
// boots or runs in a VM: the boot scripts and the stand-in programs the
// lab's packages and release tarballs install. It fails, not skips,
// without shellcheck (scripts/deps.sh installs it).
func TestGuestScriptsShellcheck(t *testing.T) {
	var scripts []string
	for _, pattern := range []string{"guest/*.sh", "../repos/standins/*.sh", "../releases/standins/*.sh"} {
		m, err := filepath.Glob(pattern)
		if err != nil || len(m) == 0 {
			t.Fatalf("no scripts match %s: %v", pattern, err)
		}
		scripts = append(scripts, m...)
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
