package faults

import (
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

// requireNoSecret fails when a lab password shows in packer's output.
func requireNoSecret(t *testing.T, out string) {
	t.Helper()
	for _, pw := range []string{theLab.ArkPassword, theLab.SitePulpPassword} {
		if strings.Contains(out, pw) {
			t.Fatal("a password appeared in packer's output")
		}
	}
}

// TestSitePulpTaskNeverFinishes: the site Pulp's worker is stuck, so
// tasks stay running. The build fails after task_timeout with a clear
// error, cancels the tasks on the site and leaves nothing in the cloud.
func TestSitePulpTaskNeverFinishes(t *testing.T) {
	labtest.Require(t)
	site := theLab.SitePulp
	site.SetHangTasks(true)
	defer site.SetHangTasks(false)
	before := len(site.Tasks())
	_, r := runBuild(t, "sitepulp", nil, "-var", "image_name="+uniqueName("sitehang"), "-var", "site_task_timeout=2s")
	requireNoSecret(t, r.Output())
	if r.ExitCode == 0 || !strings.Contains(r.Output(), "did not finish in time within 2s (cancelled the task; raise site_pulp.task_timeout") ||
		!strings.Contains(r.Output(), `repo "baseos" (9.6): site Pulp `+site.URL()) {
		t.Fatalf("want the stuck sync reported, exit %d:\n%s", r.ExitCode, r.Output())
	}
	tasks := site.SettledTasks(10 * time.Second)[before:]
	if len(tasks) == 0 {
		t.Fatal("no task was started")
	}
	for _, task := range tasks {
		if task.State != "canceled" {
			t.Errorf("task %s (%s) left %s", task.Href, task.Name, task.State)
		}
	}
	labtest.RequireClean(t, theLab)
}

// TestSitePulpArkRefusesSync: Ark refuses the credentials the site Pulp's
// remote carries (here: the sync's downloads are answered 401 while the
// data source's own listing still works). The sync task fails and the
// build says which repository and that the Ark credentials were refused.
func TestSitePulpArkRefusesSync(t *testing.T) {
	labtest.Require(t)
	theLab.Pulp.SetFaults(pulpfake.Fault{PathPrefix: "rocky/9.6/CRB/x86_64/os/" + repos.NewerTimestamp + "/repodata/", Status: 401})
	defer theLab.Pulp.SetFaults()
	_, r := runBuild(t, "sitepulp", nil, "-var", "image_name="+uniqueName("siteauth"), "-var", "verify=false")
	requireNoSecret(t, r.Output())
	out := r.Output()
	if r.ExitCode == 0 || !strings.Contains(out, `repo "crb" (9.6)`) || !strings.Contains(out, "refused the Ark credentials") ||
		!strings.Contains(out, "401, message='Unauthorized'") {
		t.Fatalf("want the refused Ark credentials reported for crb, exit %d:\n%s", r.ExitCode, out)
	}
	labtest.RequireClean(t, theLab)
}
