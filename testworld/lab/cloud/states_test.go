package cloud

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
)

func TestStateLogNotesChangesAndFirstObservation(t *testing.T) {
	var l stateLog
	l.note("server", "s1", "ACTIVE") // not recording: dropped
	l.mu.Lock()
	l.on, l.pending = true, map[string]time.Time{}
	l.mu.Unlock()
	l.note("server", "s1", "ACTIVE")
	obs := func(svc, path, body string) {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		rec := &bodyRecorder{ResponseWriter: httptest.NewRecorder()}
		rec.body = *bytes.NewBufferString(body)
		l.observeResponse(svc, r, rec)
	}
	obs(SvcCompute, "/compute/v2.1/servers/s1", `{"server":{"id":"s1","status":"BUILD"}}`)
	if !l.events[0].Observed.IsZero() {
		t.Fatal("observed in another status")
	}
	obs(SvcCompute, "/compute/v2.1/servers/s1", `{"server":{"id":"s1","status":"ACTIVE"}}`)
	first := l.events[0].Observed
	obs(SvcCompute, "/compute/v2.1/servers/s1", `{"server":{"id":"s1","status":"ACTIVE"}}`)
	if first.IsZero() || l.events[0].Observed != first || first.Before(l.events[0].Changed) {
		t.Fatalf("observation %v (changed %v)", l.events[0].Observed, l.events[0].Changed)
	}
	l.note("image", "i1", "active")
	obs(SvcImage, "/image/v2/images/i1", `{"id":"i1","status":"active"}`)
	l.note("volume", "v1", "available")
	obs(SvcVolume, "/volume/v3/p/volumes/v1", `{"volume":{"id":"v1","status":"available"}}`)
	for _, e := range l.events {
		if e.Observed.IsZero() {
			t.Errorf("%s %s not observed", e.Kind, e.ID)
		}
	}
}

// A cloud records a server's ACTIVE and the first GET showing it.
func TestRecordStatesServer(t *testing.T) {
	l := newLab(t, nil)
	l.c.RecordStates(true)
	cl := l.clients()
	ctx := context.Background()
	s, err := servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "rec", ImageRef: l.imageID, FlavorRef: testFlavor, Networks: "none"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	defer servers.Delete(ctx, cl.compute, s.ID)
	waitFor(t, 10*time.Second, "ACTIVE", func() (bool, error) {
		got, err := servers.Get(ctx, cl.compute, s.ID).Extract()
		return err == nil && got.Status == "ACTIVE", err
	})
	ev := l.c.StateEvents()
	if len(ev) != 1 || ev[0].Kind != "server" || ev[0].ID != s.ID || ev[0].Status != "ACTIVE" || ev[0].Observed.Before(ev[0].Changed) {
		t.Fatalf("events %+v", ev)
	}
}
