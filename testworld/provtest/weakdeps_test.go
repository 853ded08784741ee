package provtest

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/provisioner/fatimage"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
)

// The appliance's scoping of weak dependencies, proved with the VM's real
// dnf: the openhpc group's Slurm set is installed without them (its
// slurm-ohpc recommends a package that must stay out), a package next to
// it at dnf's default gets its recommended one, and both happen in the
// one dnf shell process. Without the update, python3, which the image
// already has, keeps its version (the appliance's `state: present`) where
// `dnf install` would take the snapshot's newer one.
func TestProvisionLabWeakDeps(t *testing.T) {
	ctx, _, comm := labVM(t, "fatimage-weakdeps", 12*time.Minute)
	t.Setenv("ARK_USERNAME", theLab.Env["ARK_USERNAME"])
	t.Setenv("ARK_PASSWORD", theLab.Env["ARK_PASSWORD"])
	manifest := filepath.Join(t.TempDir(), "m.json")
	var p fatimage.Provisioner
	if err := p.Prepare(map[string]any{
		"repos":              labRepos(t),
		"groups":             []string{"openhpc"},
		"packages":           []string{"lab-weakdep-probe", "python3"},
		"update":             false,
		"skip_cleanup_steps": []string{"ssh-host-keys", "login-ssh-keys", "resolv-conf"},
		"manifest_output":    manifest,
	}); err != nil {
		t.Fatal(err)
	}
	var uiOut logtail.Buffer
	if err := p.Provision(ctx, &packersdk.BasicUi{Writer: &uiOut, ErrorWriter: &uiOut}, comm, nil); err != nil {
		t.Fatalf("%v\n%s", err, uiOut.String())
	}
	if got := run(t, comm, "rpm -q --qf '%{NAME}\\n' slurm-ohpc lab-weakdep-probe lab-recommended-by-probe; rpm -q lab-recommended-by-slurm || true"); got !=
		"slurm-ohpc\nlab-weakdep-probe\nlab-recommended-by-probe\npackage lab-recommended-by-slurm is not installed" {
		t.Errorf("installed:\n%s\nwant slurm-ohpc without its recommended package, the probe with its own", got)
	}
	out := uiOut.String()
	if got := run(t, comm, "rpm -q --qf '%{VERSION}-%{RELEASE}\\n' python3 python3-libs"); got != "3.9.21-2.el9\n3.9.21-2.el9" {
		t.Errorf("python3, python3-libs at %q, want the image's 3.9.21-2.el9 (present, no update)", got)
	}
	if !strings.Contains(out, "python3: installed, kept at its version (present; update is off)") || regexp.MustCompile(`(?m)^\s*install\b.*\spython3(\s|$)`).MatchString(out) {
		t.Errorf("python3 not kept out of the install:\n%s", out)
	}
	if strings.Count(out, "config install_weak_deps False") != 1 || len(regexp.MustCompile(`(?m)^\s*run\s*$`).FindAllString(out, -1)) != 2 {
		t.Errorf("not two transactions with weak dependencies off for the first:\n%s", out)
	}
	if m := readManifest(t, manifest); m.DNFRuns != 1 {
		t.Errorf("%d dnf processes, want the one dnf shell", m.DNFRuns)
	}
}
