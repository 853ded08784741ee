package faults

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// TestLostAnswers lets the cloud carry out one create of a real build and
// then loses its answer, as a gateway that times out or drops the
// connection does: the build must find what the lost call made and adopt
// it, succeed, and leave nothing but its one image, which carries the
// build id. (builder/openstack's TestBuildLostAnswers runs every call of
// the builder through both kinds of loss against the cloud in-process.)
func TestLostAnswers(t *testing.T) {
	labtest.Require(t)
	defer theLab.Cloud.SetFaults()
	const action = `/action$`
	for _, tc := range []struct {
		name, svc, path, body string
		status                int
		volume                bool
	}{
		{name: "keypair", svc: cloud.SvcCompute, path: `/os-keypairs$`},
		{name: "server", svc: cloud.SvcCompute, path: `/servers$`},
		{name: "floating IP", svc: cloud.SvcNetwork, path: `/floatingips$`, status: http.StatusBadGateway},
		{name: "snapshot", svc: cloud.SvcCompute, path: action, body: "createImage"},
		{name: "boot volume", svc: cloud.SvcVolume, path: `/volumes$`, status: http.StatusGatewayTimeout, volume: true},
		{name: "volume upload", svc: cloud.SvcVolume, path: action, body: "os-volume_upload_image", volume: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := uniqueName("lost")
			theLab.Cloud.SetFaults(cloud.LoseAnswer(tc.svc, "POST", tc.path, tc.body, tc.status))
			started := time.Now()
			b, r := runBuild(t, "builder", nil, "-var", "image_name="+name, "-var", fmt.Sprintf("use_volume=%v", tc.volume))
			took := time.Since(started)
			hits := theLab.Cloud.FaultHits()
			theLab.Cloud.SetFaults()
			out := r.Output()
			if r.ExitCode != 0 {
				t.Fatalf("the build failed (hits %v):\n%s", hits, out)
			}
			if len(hits) != 1 || hits[0] != 1 {
				t.Errorf("the answer was lost %v times, want once", hits)
			}
			if !strings.Contains(out, "was lost; adopting what it made") {
				t.Errorf("the build did not say it adopted what the lost call made:\n%s", out)
			}
			img := findImage(t, name) // exactly one, active
			if img.Properties["fatimage_build_id"] == nil {
				t.Errorf("image %s lacks fatimage_build_id: %v", img.ID, img.Properties)
			}
			labtest.RequireClean(t, theLab)
			answer := "connection dropped"
			if tc.status != 0 {
				answer = fmt.Sprint(tc.status)
			}
			figure(t, "lost", []string{"Call", "Answer lost as", "Outcome", "Leftovers", "Build took"},
				tc.name, answer, "adopted, build succeeded", "0", dur(took))
			auditBuild(t, b, r)
		})
	}
}
