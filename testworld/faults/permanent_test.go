package faults

import (
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// TestPermanentFaults makes the cloud refuse or lose the build's
// resources for good: each build fails with a message naming the problem,
// and leaves nothing behind, no image included.
func TestPermanentFaults(t *testing.T) {
	labtest.Require(t)
	defer theLab.Cloud.SetFaults()
	for _, tc := range []struct {
		name   string
		faults func(name string) []cloud.Fault
		args   []string
		want   []string
	}{
		// Nova answers an over-quota boot with 403 Forbidden.
		{name: "quota-exceeded", faults: func(string) []cloud.Fault {
			return []cloud.Fault{{Service: cloud.SvcCompute, Method: "POST", Path: `^/compute/v2.1/servers$`, Status: 403,
				Message: "Quota exceeded for instances: Requested 1, but already used 10 of 10 instances"}}
		}, want: []string{"Quota exceeded for instances", "403"}},
		{name: "server-error-at-boot", faults: func(name string) []cloud.Fault {
			return []cloud.Fault{{Kind: cloud.FaultServerError, Name: "^" + name + "$",
				Message: "No valid host was found. There are not enough hosts available."}}
		}, want: []string{"went to ERROR", "No valid host was found"}},
		{name: "image-killed-during-save", faults: func(name string) []cloud.Fault {
			return []cloud.Fault{{Kind: cloud.FaultImageKilled, Name: "^" + name + "$"}}
		}, want: []string{"is killed: Glance failed to store it"}},
		{name: "image-killed-volume-upload", faults: func(name string) []cloud.Fault {
			return []cloud.Fault{{Kind: cloud.FaultImageKilled, Name: "^" + name + "$"}}
		}, args: []string{"-var", "use_volume=true"}, want: []string{"is killed: Glance failed to store it"}},
		{name: "volume-error", faults: func(string) []cloud.Fault {
			return []cloud.Fault{{Kind: cloud.FaultVolumeError}}
		}, args: []string{"-var", "use_volume=true"}, want: []string{"is in status error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := uniqueName("perm")
			theLab.Cloud.SetFaults(tc.faults(name)...)
			started := time.Now()
			b, r := runBuild(t, "builder", nil, append([]string{"-var", "image_name=" + name}, tc.args...)...)
			hits := theLab.Cloud.FaultHits()
			theLab.Cloud.SetFaults()
			if len(hits) == 0 || hits[0] != 1 {
				t.Errorf("fault applied %v times, want once", hits)
			}
			took := time.Since(started)
			t.Logf("%s: failed after %s", tc.name, took.Round(10*time.Millisecond))
			figure(t, "permanent", []string{"Case", "Failed after", "Packer's error (first line)"}, tc.name, dur(took), errorHeadline(r.Output()))
			requireFailedClean(t, r, name, tc.want...)
			auditBuild(t, b, r)
		})
	}
}
