package lab_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// TestGitServerFromVM: a VM clones a pinned tag from the lab's git server
// with its real git over smart HTTP; with the server blocked for VMs the
// clone is refused at once while the host still reaches it; the server
// is listed (with its state) by $LAB_CONTROL_URL/servers.
func TestGitServerFromVM(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, _ := labtest.BootDial(ctx, t, theLab, "git-client", "")
	const repo = "stackhpc/slurm-openstack-tools"
	url := theLab.Env["LAB_GIT_URL"] + "/" + repo + ".git"
	if url != theLab.Git.RepoURL(repo) {
		t.Fatalf("LAB_GIT_URL %q does not lead to %s", theLab.Env["LAB_GIT_URL"], theLab.Git.RepoURL(repo))
	}
	got := c.Run(t, "rm -rf /tmp/c && git -c advice.detachedHead=false clone -q --depth 1 --branch v3.0 "+url+" /tmp/c && git -C /tmp/c rev-parse HEAD")
	if want := theLab.Git.Commit(repo, "v3.0"); strings.TrimSpace(got) != want {
		t.Fatalf("clone at v3.0 is at %q, want %s", got, want)
	}

	if err := theLab.SetServerReachableFromVMs("git", false); err != nil {
		t.Fatal(err)
	}
	defer theLab.SetServerReachableFromVMs("git", true) //nolint:errcheck // Close removes it anyway
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := sess.CombinedOutput("git ls-remote " + url)
	sess.Close()
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("ls-remote from the VM while blocked: %v after %v: %s", err, time.Since(start), out)
	}
	resp, err := http.Get(theLab.Env["LAB_CONTROL_URL"] + "/servers")
	if err != nil {
		t.Fatal(err)
	}
	var servers map[string]struct {
		URL              string `json:"url"`
		ReachableFromVMs bool   `json:"reachable_from_vms"`
	}
	err = json.NewDecoder(resp.Body).Decode(&servers)
	resp.Body.Close()
	if err != nil || servers["git"].URL != theLab.Env["LAB_GIT_URL"] || servers["git"].ReachableFromVMs || !servers["releases"].ReachableFromVMs {
		t.Fatalf("servers %+v (%v)", servers, err)
	}
	// the host still reaches it
	resp, err = http.Get(url + "/info/refs?service=git-upload-pack")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("host GET info/refs: %v %v", err, resp)
	}
	resp.Body.Close()
	if !servers["pypi"].ReachableFromVMs || !strings.HasPrefix(theLab.Env["LAB_PYPI_URL"], servers["pypi"].URL+"/simple") {
		t.Fatalf("pypi in servers %+v, LAB_PYPI_URL %s", servers["pypi"], theLab.Env["LAB_PYPI_URL"])
	}
	if err := theLab.SetServerReachableFromVMs("nope", false); err == nil || !strings.Contains(err.Error(), `no content server "nope"`) {
		t.Fatalf("unknown server: %v", err)
	}
}
