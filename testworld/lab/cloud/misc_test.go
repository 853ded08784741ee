package cloud

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
)

func TestMicroversionsAndErrorShapes(t *testing.T) {
	l := newLab(t, nil)
	cl := l.clients()
	tok := cl.compute.ProviderClient.Token()
	do := func(method, path string, hdr map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, l.c.URL()+path, nil)
		req.Header.Set("X-Auth-Token", tok)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, _ := do("GET", "/compute/v2.1/flavors", map[string]string{"OpenStack-API-Version": "compute 2.60"})
	if resp.Header.Get("OpenStack-API-Version") != "compute 2.60" || resp.Header.Get("X-OpenStack-Nova-API-Version") != "2.60" {
		t.Fatalf("echo: %v", resp.Header)
	}
	resp, _ = do("GET", "/compute/v2.1/flavors", map[string]string{"X-OpenStack-Nova-API-Version": "latest"})
	if resp.Header.Get("X-OpenStack-Nova-API-Version") != "2.79" {
		t.Fatalf("latest: %v", resp.Header)
	}
	if resp, _ = do("GET", "/compute/v2.1/flavors", map[string]string{"OpenStack-API-Version": "compute 2.99"}); resp.StatusCode != 406 {
		t.Fatalf("2.99: %d", resp.StatusCode)
	}
	resp, body := do("GET", "/compute/v2.1/servers/nope", nil)
	var nova map[string]map[string]any
	if err := json.Unmarshal([]byte(body), &nova); err != nil || resp.StatusCode != 404 || nova["itemNotFound"]["code"] != float64(404) {
		t.Fatalf("nova 404: %d %s", resp.StatusCode, body)
	}
	resp, body = do("GET", "/volume/v3/"+projectOf(t, l)+"/volumes/nope", nil)
	if resp.StatusCode != 404 || !strings.Contains(body, "itemNotFound") {
		t.Fatalf("cinder 404: %d %s", resp.StatusCode, body)
	}
	resp, body = do("GET", "/image/v2/images/nope", nil)
	if resp.StatusCode != 404 || !strings.Contains(body, "No image found") {
		t.Fatalf("glance 404: %d %s", resp.StatusCode, body)
	}
	// flavor embedded in servers from 2.47
	cl.compute.Microversion = "2.47"
	s, err := servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "mv", ImageRef: l.imageID, FlavorRef: testFlavor, Networks: "none"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	got := waitServer(t, cl.compute, s.ID, "ACTIVE")
	if got.Flavor["original_name"] != "m1.small" {
		t.Fatalf("flavor: %v", got.Flavor)
	}
	if f, err := flavors.Get(ctx, cl.compute, testFlavor).Extract(); err != nil || f.Disk != 20 || f.VCPUs != 1 {
		t.Fatalf("flavor get: %+v %v", f, err)
	}
	if _, err := flavors.Get(ctx, cl.compute, "missing").Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Fatal(err)
	}
	servers.Delete(ctx, cl.compute, s.ID)
	waitServerGone(t, cl.compute, s.ID)
	// Status JSON keys
	b, _ := json.Marshal(l.c.Status())
	for _, k := range []string{"servers", "volumes", "keypairs", "floating_ips", "ports", "images", "counts"} {
		if !strings.Contains(string(b), `"`+k+`"`) {
			t.Fatalf("status json lacks %s: %s", k, b)
		}
	}
	l.assertClean()
}

func projectOf(t *testing.T, l *lab) string {
	return l.c.identity.defaultProject()
}
