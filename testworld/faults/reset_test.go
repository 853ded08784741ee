package faults

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
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
	// dnf provably still running, mid-transaction, when the reset comes
	dnf := freezeDNF(t, b)
	// the server is ACTIVE: SetFaults resets it at once
	theLab.Cloud.SetFaults(cloud.Fault{Kind: cloud.FaultServerHardReset, Name: "^" + name + "$", Times: 1})
	waitHits(t, 0, 1, 10*time.Second)
	waitState(t, dnf, "") // the reset killed the frozen dnf
	reset := time.Now()
	r := b.Proc.Wait(t, 5*time.Minute)
	took := time.Since(reset)
	t.Logf("packer exited %d, %s after the reset was scheduled", r.ExitCode, took.Round(10*time.Millisecond))
	figure(t, "reset", []string{"Test", "exit code", "exit after the reset", "Packer's error (first line)"}, t.Name(), fmt.Sprint(r.ExitCode), dur(took), errorHeadline(r.Output()))
	// dnf never finished: no step after the transaction
	out := r.Output()
	if i := strings.Index(out, "fatimage: packages: update"); i < 0 || strings.Contains(out[i:], "Complete!") || strings.Contains(out[i:], "fatimage: cleanup") || strings.Contains(out[i:], "fatimage: a reboot is pending") {
		t.Errorf("the reset did not land during the dnf transaction:\n%s", out)
	}
	return name, b, r
}

// TestHardResetDuringDNF: the build fails in bounded time with an error
// naming the provisioner step and the dnf command, and leaves nothing
// behind.
func TestHardResetDuringDNF(t *testing.T) {
	labtest.Require(t)
	name, b, r := hardResetDuringDNF(t)
	requireFailedClean(t, r, name, "fatimage packages: dnf -y", "shell")
	auditBuild(t, b, r)
}

// TestHardResetErrorSaysDisconnected wants the error to say the VM went
// away rather than report the SDK's internal "disconnected" status.
func TestHardResetErrorSaysDisconnected(t *testing.T) {
	labtest.Require(t)
	name, _, r := hardResetDuringDNF(t)
	requireFailedClean(t, r, name, "fatimage packages")
	if strings.Contains(r.Output(), "status 2300218") || !strings.Contains(strings.ToLower(r.Output()), "connection") {
		t.Fatalf("the error does not say the connection to the VM was lost:\n%s", r.Output())
	}
}

// freezeDNF waits until the build's dnf transaction is resolved (dnf
// shell prints its summary before it downloads and installs) and freezes
// the VM's dnf from the host (SIGSTOP), returning its pid.
func freezeDNF(t *testing.T, b *build) int {
	t.Helper()
	b.Proc.WaitFor(t, "Transaction Summary", 3*time.Minute)
	dnf := vmProcess(t, 30*time.Second, "dnf", "shell")
	if err := syscall.Kill(dnf, syscall.SIGSTOP); err != nil {
		t.Fatalf("stopping the VM's dnf (pid %d): %v", dnf, err)
	}
	waitState(t, dnf, "T")
	return dnf
}

// waitState waits until process pid is in state ("" = gone), see
// processState; a zombie counts as gone.
func waitState(t *testing.T, pid int, state string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := processState(pid)
		if got == state || (state == "" && got == "Z") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d in state %q, want %q", pid, got, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
