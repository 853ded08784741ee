package cloud

import (
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
)

func TestFaultHits(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	l.c.SetFaults(Fault{Service: "compute", Path: "/flavors", Status: 503, Times: 2},
		Fault{Service: "image", Status: 500}, Fault{Kind: FaultServerError})
	for i := 0; i < 3; i++ {
		flavors.ListDetail(cl.compute, nil).AllPages(ctx) //nolint:errcheck // the faults are the point
	}
	if got := l.c.FaultHits(); len(got) != 3 || got[0] != 2 || got[1] != 0 || got[2] != 0 {
		t.Fatalf("hits %v, want [2 0 0]", got)
	}
	l.c.SetFaults()
	if got := l.c.FaultHits(); len(got) != 0 {
		t.Fatalf("hits after reset %v", got)
	}
}
