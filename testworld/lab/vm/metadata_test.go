package vm

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMetadataHandler exercises the metadata HTTP handler without root.
func TestMetadataHandler(t *testing.T) {
	md := &Metadata{UUID: "u-1", Name: "n1", Hostname: "h1", Meta: map[string]string{"a": "b"},
		PublicKeys: map[string]string{"k1": "ssh-ed25519 AAAA k1"}, UserData: []byte("#cloud-config\n")}
	m := &Manager{opts: ManagerOptions{Metadata: func(ip string) *Metadata {
		if ip == "10.0.0.5" {
			return md
		}
		return nil
	}}}
	get := func(from, path string) (int, string) {
		r := httptest.NewRequest(http.MethodGet, "http://169.254.169.254"+path, nil)
		r.RemoteAddr = from + ":40000"
		w := httptest.NewRecorder()
		m.serveMetadata(w, r)
		b, _ := io.ReadAll(w.Result().Body)
		return w.Code, string(b)
	}
	code, body := get("10.0.0.5", "/openstack/latest/meta_data.json")
	var doc map[string]any
	if code != 200 || json.Unmarshal([]byte(body), &doc) != nil {
		t.Fatalf("meta_data.json: %d %s", code, body)
	}
	if doc["uuid"] != "u-1" || doc["name"] != "n1" || doc["hostname"] != "h1" || doc["availability_zone"] != "nova" ||
		doc["launch_index"] != float64(0) || doc["project_id"] == "" ||
		doc["meta"].(map[string]any)["a"] != "b" || doc["public_keys"].(map[string]any)["k1"] != "ssh-ed25519 AAAA k1" {
		t.Errorf("meta_data.json: %s", body)
	}
	for path, want := range map[string]string{
		"/openstack/latest/user_data":                   "#cloud-config\n",
		"/openstack/2013-10-17/user_data":               "#cloud-config\n",
		"/latest/meta-data/instance-id":                 "u-1",
		"/latest/meta-data/local-ipv4":                  "10.0.0.5",
		"/latest/meta-data/public-keys/":                "0=k1",
		"/latest/meta-data/public-keys/0/openssh-key":   "ssh-ed25519 AAAA k1",
		"/latest/meta-data/placement/availability-zone": "nova",
		"/latest/user-data":                             "#cloud-config\n",
	} {
		if code, body := get("10.0.0.5", path); code != 200 || body != want {
			t.Errorf("%s: %d %q, want %q", path, code, body, want)
		}
	}
	if _, body := get("10.0.0.5", "/openstack/latest/"); !strings.Contains(body, "meta_data.json") || !strings.Contains(body, "user_data") {
		t.Errorf("index: %q", body)
	}
	if code, _ := get("10.0.0.9", "/openstack/latest/meta_data.json"); code != 404 {
		t.Errorf("unknown VM: %d", code)
	}
	md.UserData = nil
	if code, _ := get("10.0.0.5", "/openstack/latest/user_data"); code != 404 {
		t.Errorf("no user_data: %d", code)
	}
}
