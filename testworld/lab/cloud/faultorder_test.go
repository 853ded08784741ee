package cloud

import (
	"context"
	"testing"
	"time"

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

// TestInFlight: a request held by a latency fault counts as in flight
// until it is answered.
func TestInFlight(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	if n := l.c.InFlight(); n != 0 {
		t.Fatalf("in flight before any request: %d", n)
	}
	l.c.SetFaults(Fault{Service: "compute", Path: "/flavors", Latency: time.Hour, Times: 1})
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		_, err := flavors.ListDetail(cl.compute, nil).AllPages(ctx)
		done <- err
	}()
	waitFor(t, 5*time.Second, "the request to be held", func() (bool, error) { return l.c.FaultHits()[0] == 1, nil })
	if n := l.c.InFlight(); n != 1 {
		t.Fatalf("in flight while held: %d, want 1", n)
	}
	cancel() // the client gives up: the cloud drops the request
	waitFor(t, 5*time.Second, "the held request to end", func() (bool, error) { return l.c.InFlight() == 0, nil })
	if err := <-done; err == nil {
		t.Fatal("the cancelled request succeeded")
	}
}
