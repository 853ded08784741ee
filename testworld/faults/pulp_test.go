package faults

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/buildtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/secretaudit"
)

// fatRepoPaths are the Pulp paths of the repositories in
// testdata/fat/common.pkr.hcl.
var fatRepoPaths = map[string]string{
	"baseos": "rocky/9.6/BaseOS/x86_64/os", "appstream": "rocky/9.6/AppStream/x86_64/os",
	"crb": "rocky/9.6/CRB/x86_64/os", "extras": "rocky/9.6/extras/x86_64/os", "epel": "epel/9/Everything/x86_64",
	"OpenHPC": "OpenHPC/3/EL_9", "OpenHPC-updates": "OpenHPC/3/updates/EL_9", "grafana": "grafana/oss/rpm",
}

// TestNewestSnapshotForbidden makes every repository's newest snapshot
// answer 403 (a content guard not yet opened to the site, say): the data
// source passes over it with a warning (in PACKER_LOG, and through the
// provisioner in the build output), and the build installs from the older
// snapshot.
func TestNewestSnapshotForbidden(t *testing.T) {
	labtest.Require(t)
	var faults []pulpfake.Fault
	for _, p := range fatRepoPaths {
		faults = append(faults, pulpfake.Fault{PathPrefix: p + "/" + repos.NewerTimestamp + "/", Status: 403})
	}
	theLab.Pulp.SetFaults(faults...)
	defer theLab.Pulp.SetFaults()
	name := uniqueName("pulp403")
	man := filepath.Join(t.TempDir(), "manifest.json")
	b, r := runBuild(t, "fat", nil, "-var", "image_name="+name, "-var", "manifest_output="+man)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	findImage(t, name)
	labtest.RequireClean(t, theLab)
	log := b.logText(t)
	warned := 0
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "[WARN] fatimage-ark: ") && strings.Contains(line, "passing over snapshot "+repos.NewerTimestamp) && strings.Contains(line, "403") {
			warned++
		}
	}
	if warned != len(fatRepoPaths) {
		t.Errorf("want %d warnings in PACKER_LOG, got %d", len(fatRepoPaths), warned)
	}
	// Packer gives data sources no output: the provisioner shows the
	// warnings that came with the repos.
	if shown := strings.Count(r.Output(), "WARNING: repository "); shown != len(fatRepoPaths) || !strings.Contains(r.Output(), "passing over snapshot "+repos.NewerTimestamp) {
		t.Errorf("want %d warnings in the build output, got %d", len(fatRepoPaths), shown)
	}
	m, _ := readManifest(t, man)
	older := 0
	for repo := range fatRepoPaths {
		if m.Image.Snapshots[repo] != repos.OlderTimestamp {
			t.Errorf("%s: snapshot %q, want the older %s (manifest %v)", repo, m.Image.Snapshots[repo], repos.OlderTimestamp, m.Image.Snapshots)
		} else {
			older++
		}
	}
	t.Logf("%d warnings; manifest snapshots %v; %d reboot(s)", warned, m.Image.Snapshots, m.Reboots)
	figure(t, "pulp403", []string{"repositories", "warnings in PACKER_LOG", "warnings in the build output", "repositories on the older snapshot", "reboots"},
		fmt.Sprint(len(fatRepoPaths)), fmt.Sprint(warned), fmt.Sprint(strings.Count(r.Output(), "WARNING: repository ")), fmt.Sprint(older), fmt.Sprint(m.Reboots))
	auditBuild(t, b, r)
}

// wrongArkPassword runs the fat build with a wrong Ark password: in
// ARK_PASSWORD for both the data source and the provisioner
// ("data-source"), or only in the provisioner's repo_password while the
// template gives the data source the right one ("provisioner").
func wrongArkPassword(t *testing.T, where string) (string, *build, packertest.Result) {
	t.Helper()
	wrong := "not-" + theLab.ArkPassword
	// auditBuild then looks for every form of it too
	buildtest.TrackSecret(t, secretaudit.Credential{Name: "wrong Ark password", User: lab.ArkUser, Secret: wrong})
	name := uniqueName("arkpw")
	var env, args []string
	switch where {
	case "data-source":
		env = []string{"ARK_PASSWORD=" + wrong}
	case "provisioner":
		args = []string{"-var", "ark_password=" + theLab.ArkPassword, "-var", "repo_password=" + wrong}
	}
	started := time.Now()
	b, r := runBuild(t, "fat", env, append([]string{"-var", "image_name=" + name}, args...)...)
	figure(t, "wrongpw", []string{"Test", "wrong password in", "failed after", "reached the package transaction", "Packer's error (first line)"},
		t.Name(), where, dur(time.Since(started)), fmt.Sprint(strings.Contains(r.Output(), "fatimage: packages")), errorHeadline(r.Output()))
	if strings.Contains(r.Output(), wrong) || strings.Contains(b.logText(t), wrong) {
		t.Errorf("the wrong password appears in the output or PACKER_LOG")
	}
	return name, b, r
}

// TestWrongArkPassword: with a wrong ARK_PASSWORD the data source fails
// before packer starts the build: no server, no package work, nothing
// left behind, every repository reported as 403 Forbidden.
func TestWrongArkPassword(t *testing.T) {
	labtest.Require(t)
	name, b, r := wrongArkPassword(t, "data-source")
	out := r.Output()
	if strings.Contains(out, "fatimage: packages") || strings.Contains(out, "Creating server") {
		t.Errorf("the build went on past the data source:\n%s", out)
	}
	requireFailedClean(t, r, name, "no usable snapshot", "answered 403 Forbidden")
	auditBuild(t, b, r)
	t.Logf("error:\n%s", logtail.Lines(out, 12))
}

// TestWrongRepoPassword: the data source has the right password, the
// provisioner a wrong repo_password: the VM's first dnf command fails
// with 403 and the build leaves nothing behind.
func TestWrongRepoPassword(t *testing.T) {
	labtest.Require(t)
	name, b, r := wrongArkPassword(t, "provisioner")
	requireFailedClean(t, r, name, "Status code: 403")
	auditBuild(t, b, r)
	t.Logf("reached the package transaction: %v", strings.Contains(r.Output(), "fatimage: packages"))
}

// TestWrongArkPasswordNamesCredentials wants both failures to name the
// credentials, and the provisioner to check them before any package work.
func TestWrongArkPasswordNamesCredentials(t *testing.T) {
	labtest.Require(t)
	for _, where := range []string{"data-source", "provisioner"} {
		t.Run(where, func(t *testing.T) {
			name, _, r := wrongArkPassword(t, where)
			requireFailedClean(t, r, name)
			low := strings.ToLower(r.Output())
			if strings.Contains(low, "transaction summary") || !(strings.Contains(low, "password") || strings.Contains(low, "credential")) {
				t.Fatalf("want a credential error before any package work:\n%s", logtail.Lines(r.Output(), 12))
			}
		})
	}
}
