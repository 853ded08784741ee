package fatimage

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// A version pin of a package update_exclude keeps (grafana-10.4.18 on an
// image that has grafana) is left out of the install as the name is.
func TestTransactionIsKept(t *testing.T) {
	script := "set -eu\n. \"$1\"\nkeep=' grafana  apptainer '\n" +
		"for p in grafana grafana-10.4.18 apptainer-1.4.1-1.el9 grafana-data munge grafanax; do if is_kept \"$p\"; then echo \"$p kept\"; else echo \"$p installed\"; fi; done\n"
	out, err := exec.Command("sh", "-c", script, "sh", filepath.Join("scripts", "transaction.sh")).CombinedOutput()
	want := "grafana kept\ngrafana-10.4.18 kept\napptainer-1.4.1-1.el9 kept\ngrafana-data installed\nmunge installed\ngrafanax installed\n"
	if err != nil || string(out) != want {
		t.Errorf("%v:\n%s\nwant\n%s", err, out, want)
	}
}
