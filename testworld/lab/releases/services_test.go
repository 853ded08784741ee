package releases

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The dashboards carry DS_* placeholders as ${...}; the HPL tarball is
// byte-stable, so example/lab.pkrvars.hcl can pin its sha256.
func TestServiceFiles(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, d := range DefaultGrafanaDashboards() {
		resp, err := http.Get(s.FileURL(d.Path()))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"datasource": "${DS_PROMETHEUS}"`) || !strings.Contains(string(body), `"name": "DS_PROMETHEUS"`) {
			t.Errorf("%s: %s\n%s", d.Path(), resp.Status, body)
		}
	}
	a, _ := HPLTarball()
	b, _ := HPLTarball()
	sum := sha256.Sum256(a)
	if string(a) != string(b) || s.SHA256(HPLPath) != hex.EncodeToString(sum[:]) {
		t.Fatalf("HPL tarball not stable or not served")
	}
	vars, err := os.ReadFile(filepath.Join("..", "..", "..", "example", "lab.pkrvars.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(vars), `hpl_sha256 = "`+s.SHA256(HPLPath)+`"`) {
		t.Errorf("example/lab.pkrvars.hcl does not pin the lab's HPL stand-in: hpl_sha256 = %q", s.SHA256(HPLPath))
	}
}
