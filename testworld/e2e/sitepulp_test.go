package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// TestSitePulpBuild: the build VMs cannot reach the Ark double; the data
// source syncs the chosen snapshots into the site Pulp, the provisioner
// installs from it, and a second build reuses everything (no new task).
func TestSitePulpBuild(t *testing.T) {
	labtest.Require(t)
	site := theLab.SitePulp
	if st := site.Stats(); st.Tasks != 0 {
		t.Fatalf("the site Pulp is not fresh: %+v", st)
	}
	if err := theLab.SetArkReachableFromVMs(false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := theLab.SetArkReachableFromVMs(true); err != nil {
			t.Error(err)
		}
	})

	name := fmt.Sprintf("e2e-site-%d", time.Now().Unix())
	r := build(t, []string{"site-pulp.pkr.hcl"}, "-var", "image_name="+name)
	for _, secret := range []string{theLab.ArkPassword, theLab.SitePulpPassword} {
		if strings.Contains(r.Output(), secret) {
			t.Fatal("a password appeared in packer's output")
		}
	}
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	if !strings.Contains(r.Output(), "fatimage: site Pulp: 3 snapshots synced now, 0 already served (synced: appstream, baseos, crb)") {
		t.Errorf("no site Pulp summary for a first sync:\n%s", r.Output())
	}
	findImage(t, name)
	labtest.RequireClean(t, theLab)
	first := site.Stats()
	// Per snapshot: a sync, a publication and a distribution.
	if first.Tasks != 9 || first.Distributions != 3 {
		t.Fatalf("after the first build: %+v", first)
	}
	// The VM fetched the package from the site (Ark was unreachable).
	fromSite := false
	for _, req := range site.Content().Requests() {
		if strings.Contains(req.Path, "/rocky/9.6/CRB/x86_64/os/") && strings.Contains(req.Path, "/munge-devel-") && req.Status == 200 {
			fromSite = true
		}
	}
	if !fromSite {
		t.Fatal("no munge-devel download from the site Pulp's content app")
	}

	name2 := name + "-again"
	r = build(t, []string{"site-pulp.pkr.hcl"}, "-var", "image_name="+name2)
	if r.ExitCode != 0 {
		t.Fatalf("second packer build failed:\n%s", r.Output())
	}
	if !strings.Contains(r.Output(), "fatimage: site Pulp: 0 snapshots synced now, 3 already served") {
		t.Errorf("the second build did not reuse the site's snapshots:\n%s", r.Output())
	}
	if again := site.Stats(); again != first {
		t.Fatalf("the second build changed the site Pulp: %+v -> %+v", first, again)
	}
	findImage(t, name2)
	labtest.RequireClean(t, theLab)
}
