package cloud

import (
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
)

// TestFaultHitsCountAnswers: when two status rules match one request, the
// first answers and only it counts a hit, so the hits of a test's rules add
// up to the injected answers a client saw (the faults suite asserts one
// retry per injected answer from them). A latency rule before it still
// applies and counts.
func TestFaultHitsCountAnswers(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	l.c.SetFaults(Fault{Service: "compute", Path: "/flavors", Latency: 1},
		Fault{Service: "compute", Path: "/flavors", Status: 503, Times: 1},
		Fault{Service: "compute", Path: "/flavors", Status: 429, Times: 1})
	var codes []int
	for i := 0; i < 3; i++ {
		_, err := flavors.ListDetail(cl.compute, nil).AllPages(ctx)
		code := 200
		if err != nil {
			code = -1
			for _, c := range []int{503, 429} {
				if gophercloud.ResponseCodeIs(err, c) {
					code = c
				}
			}
		}
		codes = append(codes, code)
	}
	if got := l.c.FaultHits(); len(got) != 3 || got[0] != 3 || got[1] != 1 || got[2] != 1 {
		t.Fatalf("hits %v, want [3 1 1]: one hit per answer", got)
	}
	if codes[0] != 503 || codes[1] != 429 || codes[2] != 200 {
		t.Fatalf("answers %v, want [503 429 200]", codes)
	}
}
