package cloud

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
)

func TestFloatingIPLifecycle(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	net := labNet(t, cl.network)
	p, err := ports.Create(ctx, cl.network, ports.CreateOpts{NetworkID: net.ID, Name: "pre",
		FixedIPs: []ports.IP{{IPAddress: "10.213.5.5"}}}).Extract()
	if err != nil || p.FixedIPs[0].IPAddress != "10.213.5.5" || p.Status != "DOWN" {
		t.Fatalf("port: %+v %v", p, err)
	}
	s, err := servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "fip", ImageRef: l.imageID, FlavorRef: testFlavor,
		Networks: []servers.Network{{Port: p.ID}}}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitServer(t, cl.compute, s.ID, "ACTIVE")
	pages, _ := ports.List(cl.network, ports.ListOpts{DeviceID: s.ID}).AllPages(ctx)
	ps, _ := ports.ExtractPorts(pages)
	if len(ps) != 1 || ps[0].ID != p.ID || ps[0].Status != "ACTIVE" {
		t.Fatalf("ports by device: %+v", ps)
	}
	pages, _ = networks.List(cl.network, networks.ListOpts{Name: "public"}).AllPages(ctx)
	pub, _ := networks.ExtractNetworks(pages)
	fip, err := floatingips.Create(ctx, cl.network, floatingips.CreateOpts{FloatingNetworkID: pub[0].ID}).Extract()
	if err != nil || fip.PortID != "" || fip.Status != "DOWN" {
		t.Fatalf("fip: %+v %v", fip, err)
	}
	if _, err := floatingips.Create(ctx, cl.network, floatingips.CreateOpts{FloatingNetworkID: net.ID}).Extract(); !gophercloud.ResponseCodeIs(err, 400) {
		t.Fatalf("fip on internal net: %v", err)
	}
	fip, err = floatingips.Update(ctx, cl.network, fip.ID, floatingips.UpdateOpts{PortID: &p.ID}).Extract()
	if err != nil || fip.PortID != p.ID || fip.FixedIP != "10.213.5.5" {
		t.Fatalf("associate: %+v %v", fip, err)
	}
	m := l.hv.machine(s.ID)
	if !m.hasFIP(fip.FloatingIP) {
		t.Fatal("AddFloatingIP not called")
	}
	got, _ := servers.Get(ctx, cl.compute, s.ID).Extract()
	if !strings.Contains(mustJSON(got.Addresses), fip.FloatingIP) || !strings.Contains(mustJSON(got.Addresses), `"floating"`) {
		t.Fatalf("addresses: %v", got.Addresses)
	}
	pages, _ = floatingips.List(cl.network, floatingips.ListOpts{FloatingIP: fip.FloatingIP}).AllPages(ctx)
	if fs, _ := floatingips.ExtractFloatingIPs(pages); len(fs) != 1 || fs[0].PortID != p.ID {
		t.Fatalf("list: %+v", fs)
	}
	pages, _ = floatingips.List(cl.network, floatingips.ListOpts{PortID: "other"}).AllPages(ctx)
	if fs, _ := floatingips.ExtractFloatingIPs(pages); len(fs) != 0 {
		t.Fatal("port filter")
	}
	fip, err = floatingips.Update(ctx, cl.network, fip.ID, floatingips.UpdateOpts{PortID: new(string)}).Extract()
	if err != nil || fip.PortID != "" || m.hasFIP(fip.FloatingIP) {
		t.Fatalf("disassociate: %+v %v", fip, err)
	}
	if _, err := floatingips.Get(ctx, cl.network, fip.ID).Extract(); err != nil {
		t.Fatal(err)
	}
	if err := floatingips.Delete(ctx, cl.network, fip.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	servers.Delete(ctx, cl.compute, s.ID)
	waitServerGone(t, cl.compute, s.ID)
	// the user-created port survives the server, unbound
	p2, err := ports.Get(ctx, cl.network, p.ID).Extract()
	if err != nil || p2.DeviceID != "" {
		t.Fatalf("port after delete: %+v %v", p2, err)
	}
	name := "renamed"
	if p2, err = ports.Update(ctx, cl.network, p.ID, ports.UpdateOpts{Name: &name}).Extract(); err != nil || p2.Name != name {
		t.Fatal(err)
	}
	if err := ports.Delete(ctx, cl.network, p.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	l.assertClean()
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestHTTPFaults(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	// 503 with Retry-After, once
	l.c.SetFaults(Fault{Service: "compute", Method: "GET", Path: "/flavors", Status: 503, RetryAfter: "1", Times: 1})
	_, err := flavors.ListDetail(cl.compute, nil).AllPages(ctx)
	var ue gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &ue) || ue.Actual != 503 || ue.ResponseHeader.Get("Retry-After") != "1" || !bytes.Contains(ue.Body, []byte("serviceUnavailable")) {
		t.Fatalf("503: %v", err)
	}
	if _, err := flavors.ListDetail(cl.compute, nil).AllPages(ctx); err != nil {
		t.Fatalf("fault should be exhausted: %v", err)
	}
	// 429 twice: gophercloud retries honouring Retry-After
	cl.compute.ProviderClient.MaxBackoffRetries = 3
	var seen []string
	cl.compute.ProviderClient.RetryBackoffFunc = func(ctx context.Context, e *gophercloud.ErrUnexpectedResponseCode, err error, n uint) error {
		seen = append(seen, e.ResponseHeader.Get("Retry-After"))
		return nil // a real client would sleep Retry-After seconds; the double needs no pause
	}
	l.c.SetFaults(Fault{Service: "compute", Path: "/flavors", Status: 429, RetryAfter: "2", Times: 2})
	if _, err := flavors.ListDetail(cl.compute, nil).AllPages(ctx); err != nil {
		t.Fatalf("429 retry: %v", err)
	}
	if len(seen) != 2 || seen[0] != "2" {
		t.Fatalf("retries: %v", seen)
	}
	var start time.Time
	// 500 on image service with Glance's plain text body
	l.c.SetFaults(Fault{Service: "image", Status: 500})
	if _, err := images.Get(ctx, cl.image, l.imageID).Extract(); !gophercloud.ResponseCodeIs(err, 500) {
		t.Fatalf("500: %v", err)
	}
	// latency and hang
	l.c.SetFaults(Fault{Service: "network", Latency: 150 * time.Millisecond}, Fault{Service: "volume", Hang: true})
	start = time.Now()
	labNet(t, cl.network)
	if time.Since(start) < 150*time.Millisecond {
		t.Fatal("latency not applied")
	}
	hctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = volumes.List(cl.volume, nil).AllPages(hctx)
	cancel()
	if err == nil {
		t.Fatal("hang should time out")
	}
	// rate 0.5 over many calls hits some but not all; control endpoint
	body, _ := json.Marshal([]Fault{{Service: "compute", Path: "/flavors", Status: 500, Rate: 0.5}})
	req, _ := http.NewRequest("PUT", l.c.URL()+"/_control/faults", bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Fatalf("control: %v", resp.Status)
	}
	fails := 0
	for i := 0; i < 40; i++ {
		if _, err := flavors.ListDetail(cl.compute, nil).AllPages(ctx); err != nil {
			fails++
		}
	}
	if fails == 0 || fails == 40 {
		t.Fatalf("rate: %d/40 failed", fails)
	}
	l.c.SetFaults()
	resp, err = http.Get(l.c.URL() + "/_control/status")
	if err != nil {
		t.Fatal(err)
	}
	var st Status
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st.Counts == nil {
		t.Fatal("status")
	}
	if calls := l.c.Calls(); calls["compute"] < 40 || calls["identity"] < 1 || calls["image"] < 1 {
		t.Fatalf("calls %v", calls)
	}
	l.assertClean()
}

func TestResourceFaults(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	l.c.SetFaults(
		Fault{Kind: FaultServerError, Name: "^bad", Message: "No valid host was found.", Times: 1},
		Fault{Kind: FaultServerStuck, Name: "^stuck", Times: 1},
		Fault{Kind: FaultImageKilled, Name: "^doomed", Times: 1},
		Fault{Kind: FaultVolumeError, Name: "^verr", Times: 1},
		Fault{Kind: FaultVolumeStuck, Name: "^vstuck", Times: 1},
		Fault{Kind: FaultServerHardReset, Name: "^flaky", Delay: 20 * time.Millisecond, Times: 1},
		Fault{Kind: FaultSSHDelay, Name: "^flaky", Delay: 3 * time.Second, Times: 1},
	)
	mk := func(name string) string {
		s, err := servers.Create(ctx, cl.compute, servers.CreateOpts{Name: name, ImageRef: l.imageID, FlavorRef: testFlavor, Networks: "auto"}, nil).Extract()
		if err != nil {
			t.Fatal(err)
		}
		return s.ID
	}
	bad, stuck, flaky := mk("bad-1"), mk("stuck-1"), mk("flaky-1")
	es := waitServer(t, cl.compute, bad, "ERROR")
	if es.Fault.Code != 500 || es.Fault.Message != "No valid host was found." {
		t.Fatalf("fault: %+v", es.Fault)
	}
	waitServer(t, cl.compute, flaky, "ACTIVE")
	waitFor(t, 2*time.Second, "hard reset", func() (bool, error) {
		m := l.hv.machine(flaky)
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.resets == 1, nil
	})
	if spec, _ := l.hv.spec(flaky); spec.SSHDelay != 3*time.Second {
		t.Fatalf("ssh delay: %+v", spec)
	}
	// the next server is fine again (Times: 1)
	ok := mk("bad-2")
	waitServer(t, cl.compute, ok, "ACTIVE")
	// servers made after the stuck one are ACTIVE: it would be too, were
	// it not stuck
	if s, _ := servers.Get(ctx, cl.compute, stuck).Extract(); s.Status != "BUILD" {
		t.Fatalf("stuck: %s", s.Status)
	}
	// killed snapshot
	imgID, err := servers.CreateImage(ctx, cl.compute, flaky, servers.CreateImageOpts{Name: "doomed-snap"}).ExtractImageID()
	if err != nil {
		t.Fatal(err)
	}
	waitImage(t, cl.image, imgID, "killed")
	if st := l.c.Status(); len(st.Images) != 1 || st.Images[0].Status != "killed" {
		t.Fatalf("status images: %+v", st.Images)
	}
	// volumes
	v1, _ := volumes.Create(ctx, cl.volume, volumes.CreateOpts{Size: 1, Name: "verr"}, nil).Extract()
	v2, _ := volumes.Create(ctx, cl.volume, volumes.CreateOpts{Size: 1, Name: "vstuck"}, nil).Extract()
	v3, _ := volumes.Create(ctx, cl.volume, volumes.CreateOpts{Size: 1, Name: "vfine"}, nil).Extract()
	waitVolume(t, cl.volume, v1.ID, "error")
	// a volume made after the stuck one is available: it would be too,
	// were it not stuck
	waitVolume(t, cl.volume, v3.ID, "available")
	if v, _ := volumes.Get(ctx, cl.volume, v2.ID).Extract(); v.Status != "creating" {
		t.Fatalf("stuck volume: %s", v.Status)
	}
	// cleanup
	for _, id := range []string{bad, stuck, flaky, ok} {
		if err := servers.Delete(ctx, cl.compute, id).ExtractErr(); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{v1.ID, v2.ID, v3.ID} {
		if err := volumes.Delete(ctx, cl.volume, id, nil).ExtractErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := images.Delete(ctx, cl.image, imgID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	l.assertClean()
}
