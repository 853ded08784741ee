package fatimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func makeTarball(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, content := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg})
		tw.Write([]byte(content))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func TestFetchBinary(t *testing.T) {
	tgz := makeTarball(t, map[string]string{
		"prometheus-3.5.3.linux-amd64/prometheus": "P", "prometheus-3.5.3.linux-amd64/promtool": "T",
		"prometheus-3.5.3.linux-amd64/LICENSE": "L",
	})
	sum := sha256.Sum256(tgz)
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		if r.URL.Path != "/prometheus/prometheus/releases/download/v3.5.3/prometheus-3.5.3.linux-amd64.tar.gz" {
			http.NotFound(w, r)
			return
		}
		w.Write(tgz)
	}))
	defer srv.Close()
	b := Binary{Name: "prometheus", Version: "3.5.3", SHA256: hex.EncodeToString(sum[:]), Files: []string{"prometheus", "promtool"}}
	files, err := fetchBinary(context.Background(), srv.Client(), srv.URL+"/prometheus", b)
	if err != nil {
		t.Fatal(err, paths)
	}
	if string(files["prometheus"]) != "P" || string(files["promtool"]) != "T" || len(files) != 2 {
		t.Errorf("files %v", files)
	}
	b.SHA256 = strings.Repeat("0", 64)
	if _, err := fetchBinary(context.Background(), srv.Client(), srv.URL+"/prometheus", b); err == nil || !strings.Contains(err.Error(), "sha256 of prometheus-3.5.3.linux-amd64.tar.gz is") {
		t.Errorf("checksum mismatch: %v", err)
	}
	b.Version = "9.9.9"
	if _, err := fetchBinary(context.Background(), srv.Client(), srv.URL+"/prometheus", b); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("missing release: %v", err)
	}
	if _, err := extractFiles(tgz, []string{"amtool"}); err == nil || !strings.Contains(err.Error(), "amtool not found") {
		t.Errorf("missing file: %v", err)
	}
}

func TestBinariesValidation(t *testing.T) {
	clearArkEnv(t)
	good := strings.Repeat("ab", 32)
	cases := []struct {
		raw  map[string]any
		want string
	}{
		{map[string]any{"binaries": []any{map[string]any{"name": "node_exporter", "version": "v1.0", "sha256": good}}}, `binaries[0]: version "v1.0" must be like 1.2.3`},
		{map[string]any{"binaries": []any{map[string]any{"name": "node_exporter", "version": "1.0", "sha256": "xyz"}}}, "binaries[0]: sha256 must be 64 hex digits"},
		{map[string]any{"binaries": []any{map[string]any{"name": "a", "version": "1", "sha256": good}, map[string]any{"name": "a", "version": "2", "sha256": good}}}, `binaries[1]: duplicate binary "a"`},
		{map[string]any{"binaries": []any{map[string]any{"name": "a", "version": "1", "sha256": good, "files": []string{"../x"}}}}, `binaries[0]: file "../x" is not a plain executable name`},
		{map[string]any{"binary_source": "ftp://x"}, `binary_source: "ftp://x" must be an http(s) URL`},
	}
	for _, tc := range cases {
		var p Provisioner
		err := p.Prepare(tc.raw)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
