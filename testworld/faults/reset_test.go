package faults

import (
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// hardResetDuringDNF starts a fat build and hard-resets its VM (as a
// hypervisor crash or `openstack server reboot --hard` would) while the
// provisioner's dnf transaction runs.
func hardResetDuringDNF(t *testing.T) (string, *build, packertest.Result) {
	t.Helper()
	defer theLab.Cloud.SetFaults()
	name := uniqueName("reset")
	b := startBuild(t, "fat", nil, "-var", "image_name="+name)
	// dnf shell prints this once it has resolved the transaction, before
	// it downloads and installs
	b.Proc.WaitFor(t, "Transaction Summary", 3*time.Minute)
	// the server is ACTIVE: SetFaults resets it at once
	theLab.Cloud.SetFaults(cloud.Fault{Kind: cloud.FaultServerHardReset, Name: "^" + name + "$", Times: 1})
	waitHits(t, 0, 1, 10*time.Second)
	reset := time.Now()
	r := b.Proc.Wait(t, 5*time.Minute)
	t.Logf("packer exited %d, %s after the reset was scheduled", r.ExitCode, time.Since(reset).Round(10*time.Millisecond))
	// dnf was running: the output holds no step after the transaction
	out := r.Output()
	if i := strings.Index(out, "fatimage: packages: update"); i < 0 || strings.Contains(out[i:], "fatimage: cleanup") || strings.Contains(out[i:], "fatimage: a reboot is pending") {
		t.Errorf("the reset did not land during the dnf transaction:\n%s", out)
	}
	return name, b, r
}

// TestHardResetDuringDNF: the build fails in bounded time with an error
// naming the provisioner step and the dnf command, and leaves nothing
// behind.
func TestHardResetDuringDNF(t *testing.T) {
	name, b, r := hardResetDuringDNF(t)
	requireFailedClean(t, r, name, "fatimage packages: dnf -y", "shell")
	auditBuild(t, b, r)
}

// TestHardResetErrorSaysDisconnected wants the error to say the VM went
// away rather than report the SDK's internal "disconnected" status.
func TestHardResetErrorSaysDisconnected(t *testing.T) {
	name, _, r := hardResetDuringDNF(t)
	requireFailedClean(t, r, name, "fatimage packages")
	if strings.Contains(r.Output(), "status 2300218") || !strings.Contains(strings.ToLower(r.Output()), "connection") {
		t.Fatalf("the error does not say the connection to the VM was lost:\n%s", r.Output())
	}
}
