package faults

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// slow is the latency that holds a step's API call in flight while the
// test interrupts the build.
const slow = 3 * time.Second

// TestInterruptEachStep sends SIGINT to packer's process group (Ctrl-C)
// at each builder step in turn and while the fatimage provisioner runs
// dnf: packer must exit and the build must leave no server, volume,
// image, keypair, port or floating IP behind.
//
// Where a step calls the API, a latency fault on that call holds it in
// flight; the signal goes out once the step's UI line is printed and the
// fault has applied (hits), so the interrupt lands inside the step.
func TestInterruptEachStep(t *testing.T) {
	labtest.Require(t)
	defer theLab.Cloud.SetFaults()
	action := `^/compute/v2.1/servers/[^/]+/action$`
	for _, tc := range []struct {
		step    string
		waitFor string
		faults  func(name string) []cloud.Fault
		hits    int // wait until faults[0] applied this often
		args    []string
		tmpl    string
	}{
		{step: "StepAuthenticate", waitFor: "Authenticating to",
			faults: latency(cloud.SvcIdentity, "POST", `/auth/tokens$`)},
		{step: "StepLoadFlavor", waitFor: "Loading flavor",
			faults: latency(cloud.SvcCompute, "GET", `/flavors`)},
		// local key generation: no API call to hold, the signal lands in
		// this step or just after it
		{step: "StepSSHKey", waitFor: "Creating a temporary"},
		// the keypair's POST under latency: TestInterruptDuringKeypairCreate
		{step: "StepKeyPair", waitFor: "Creating the temporary keypair"},
		{step: "StepSourceImage", waitFor: "Creating the temporary keypair",
			faults: latency(cloud.SvcImage, "GET", `^/image/v2/images$`)},
		{step: "StepDiscoverNetwork", waitFor: "Discovering a network",
			faults: latency(cloud.SvcNetwork, "GET", `/subnets`),
			args:   []string{"-var", fmt.Sprintf(`discovery_cidrs=["%s"]`, theLab.Network.CIDR)}},
		{step: "StepCreateVolume", waitFor: "Creating boot volume",
			faults: latency(cloud.SvcVolume, "GET", `/volumes/[0-9a-f-]+$`),
			args:   []string{"-var", "use_volume=true"}},
		{step: "StepRunServer/create", waitFor: "Creating server",
			faults: latency(cloud.SvcCompute, "POST", `^/compute/v2.1/servers$`)},
		{step: "StepRunServer/BUILD", waitFor: "to become ACTIVE",
			faults: func(name string) []cloud.Fault {
				return []cloud.Fault{{Kind: cloud.FaultServerStuck, Name: "^" + name + "$"}}
			}},
		{step: "StepFloatingIP/allocate", waitFor: "Allocating a floating IP",
			faults: latency(cloud.SvcNetwork, "POST", `/floatingips$`)},
		{step: "StepConnect", waitFor: "Waiting for SSH to become available",
			faults: func(name string) []cloud.Fault {
				return []cloud.Fault{{Kind: cloud.FaultSSHDelay, Name: "^" + name + "$", Delay: time.Minute}}
			}},
		{step: "StepProvision/shell", waitFor: "fault-provision-marker", args: []string{"-var", "sleep=120"}},
		// dnf shell prints the resolved transaction's summary, then
		// downloads and installs: dnf is running
		{step: "StepProvision/fatimage-dnf", waitFor: "Transaction Summary", tmpl: "fat"},
		{step: "StepStopServer", waitFor: "Stopping server",
			faults: latency(cloud.SvcCompute, "POST", action)},
		{step: "StepCreateImage/create", waitFor: "Creating image", hits: 2, // os-stop, then createImage
			faults: latency(cloud.SvcCompute, "POST", action)},
		{step: "StepCreateImage/saving", waitFor: "to become active",
			faults: latency(cloud.SvcImage, "GET", `^/image/v2/images/[0-9a-f-]+$`)},
		{step: "StepCreateImage/volume-upload", waitFor: "Uploading volume",
			faults: latency(cloud.SvcVolume, "POST", `/volumes/[^/]+/action$`), // os-volume_upload_image
			args:   []string{"-var", "use_volume=true"}},
		{step: "StepUpdateImage", waitFor: "Updating image",
			faults: latency(cloud.SvcImage, "PATCH", ``)},
	} {
		t.Run(strings.ReplaceAll(tc.step, "/", "-"), func(t *testing.T) {
			name := uniqueName("int")
			tmpl := tc.tmpl
			if tmpl == "" {
				tmpl = "builder"
			}
			if tc.faults != nil {
				theLab.Cloud.SetFaults(tc.faults(name)...)
			}
			b := startBuild(t, tmpl, nil, append([]string{"-var", "image_name=" + name}, tc.args...)...)
			b.Proc.WaitFor(t, tc.waitFor, 3*time.Minute)
			if tc.faults != nil {
				waitHits(t, 0, max(tc.hits, 1), time.Minute)
			}
			r, took := b.interrupt(t)
			theLab.Cloud.SetFaults()
			t.Logf("%s: packer exited %s after SIGINT (exit %d)", tc.step, took.Round(10*time.Millisecond), r.ExitCode)
			figure(t, "interrupt", []string{"Step (subtest)", "SIGINT to exit", "exit code"}, tc.step, dur(took), fmt.Sprint(r.ExitCode))
			requireFailedClean(t, r, name, "cancel")
			auditBuild(t, b, r)
		})
	}
}

// latency holds matching requests for slow.
func latency(svc, method, path string) func(string) []cloud.Fault {
	return func(string) []cloud.Fault {
		return []cloud.Fault{{Service: svc, Method: method, Path: path, Latency: slow}}
	}
}

// TestInterruptDuringKeypairCreate interrupts the build while Nova is
// still handling the temporary keypair's POST (a slow API: the request
// has arrived, the answer has not). The create must finish and be cleaned
// up rather than be abandoned mid-request and created after cleanup ran.
func TestInterruptDuringKeypairCreate(t *testing.T) {
	labtest.Require(t)
	defer theLab.Cloud.SetFaults()
	name := uniqueName("kp")
	theLab.Cloud.SetFaults(latency(cloud.SvcCompute, "POST", `/os-keypairs$`)(name)...)
	b := startBuild(t, "builder", nil, "-var", "image_name="+name)
	b.Proc.WaitFor(t, "Creating the temporary keypair", time.Minute)
	waitHits(t, 0, 1, time.Minute)
	r, _ := b.interrupt(t)
	theLab.Cloud.SetFaults()
	// packer has exited: once the held POST is answered (or dropped with
	// its connection) nothing can create a keypair behind the leak check
	waitIdle(t, slow+time.Minute)
	requireFailedClean(t, r, name, "cancel")
}
