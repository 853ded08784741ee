package vm

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// TestMetadataHandler exercises the metadata HTTP handler without root.
func TestMetadataHandler(t *testing.T) {
	md := &Metadata{UUID: "u-1", Name: "n1", Hostname: "h1", Meta: map[string]string{"a": "b"},
		PublicKeys: map[string]string{"k1": "ssh-ed25519 AAAA k1"}, UserData: []byte("#cloud-config\n")}
	h := MetadataHandler(func(ip string) *Metadata {
		if ip == "10.0.0.5" {
			return md
		}
		return nil
	})
	get := func(from, path string) (int, string) {
		r := httptest.NewRequest(http.MethodGet, "http://169.254.169.254"+path, nil)
		r.RemoteAddr = from + ":40000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
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

// extractISO gives a VM a config drive's files as genisoimage wrote them
// (Nova's flags: Rock Ridge and Joliet, volume config-2), nested
// directories and names Rock Ridge keeps included.
func TestExtractISO(t *testing.T) {
	needs.Tools(t, "genisoimage", "isoinfo")
	src, dst := t.TempDir(), t.TempDir()
	files := map[string]string{
		"openstack/latest/meta_data.json":        `{"meta": {"ansible_init_disable": "true"}}`,
		"openstack/latest/user_data":             "#cloud-config\n",
		"openstack/2018-08-27/vendor_data2.json": "{}",
		"ec2/latest/meta-data.json":              "{}",
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	iso := filepath.Join(t.TempDir(), "disk.config")
	if out, err := exec.Command("genisoimage", "-o", iso, "-ldots", "-allow-lowercase", "-allow-multidot", "-l",
		"-quiet", "-J", "-r", "-V", "config-2", src).CombinedOutput(); err != nil {
		t.Fatalf("genisoimage: %v\n%s", err, out)
	}
	if err := extractISO(iso, dst); err != nil {
		t.Fatal(err)
	}
	for p, body := range files {
		if got, err := os.ReadFile(filepath.Join(dst, p)); err != nil || string(got) != body {
			t.Errorf("%s: %q, %v; want %q", p, got, err, body)
		}
	}
}
