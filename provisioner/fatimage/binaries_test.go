package fatimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/fetch"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

func makeTarball(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			panic(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			panic(err)
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestBuiltinBinariesFollowGroups(t *testing.T) {
	clearArkEnv(t)
	cases := []struct {
		groups []string
		want   string
	}{
		{[]string{"fatimage"}, "node_exporter,prometheus,alertmanager"},
		{[]string{"node_exporter", "prometheus", "alertmanager", "grafana"}, "node_exporter,prometheus,alertmanager"},
		{[]string{"openhpc", "node_exporter"}, "node_exporter"},
		{[]string{"nfs"}, ""},
	}
	for _, tc := range cases {
		var p Provisioner
		if err := p.Prepare(map[string]any{"groups": tc.groups}); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, b := range p.plan.binaries {
			names = append(names, b.Name)
		}
		if got := strings.Join(names, ","); got != tc.want {
			t.Errorf("groups %v: binaries %q, want %q", tc.groups, got, tc.want)
		}
	}
	var p Provisioner
	if err := p.Prepare(map[string]any{"groups": []string{"node_exporter", "prometheus"}, "default_binaries": false}); err != nil || len(p.plan.binaries) != 0 {
		t.Errorf("default_binaries = false: %v %v", err, p.plan.binaries)
	}
	// the spec's versions and checksums
	p = Provisioner{}
	if err := p.Prepare(map[string]any{"groups": []string{"node_exporter", "prometheus"}}); err != nil {
		t.Fatal(err)
	}
	prom := p.plan.binaries[1]
	if prom.Version != "3.5.3" || prom.SHA256 != "8c30b9d99664e39b0363c0ba54fab30a7958e9d3de27246bf26ed85e6cfb8946" ||
		strings.Join(prom.Files, ",") != "prometheus,promtool" || prom.Destination != "/usr/local/bin" || prom.Mode != "0755" {
		t.Errorf("prometheus built-in %+v", prom)
	}
	u, err := prom.downloadURL(p.config.ReleaseBaseURL)
	if err != nil || u != "https://github.com/prometheus/prometheus/releases/download/v3.5.3/prometheus-3.5.3.linux-amd64.tar.gz" {
		t.Errorf("url %q %v", u, err)
	}
}

func TestBinaryOverrides(t *testing.T) {
	clearArkEnv(t)
	other := strings.Repeat("ab", 32)
	var p Provisioner
	err := p.Prepare(map[string]any{
		"groups":           []string{"node_exporter"},
		"release_base_url": "http://mirror.example/releases/",
		"binaries": []any{
			map[string]any{"name": "node_exporter", "sha256": other},
			map[string]any{"name": "slurm_exporter", "version": "0.20", "sha256": other,
				"url": "http://x.example/{{.Name}}/v{{.Version}}.tgz", "destination": "/opt/bin", "mode": "0750"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	bins := p.plan.binaries
	if len(bins) != 2 || bins[0].Version != "1.11.1" || bins[0].SHA256 != other || bins[0].Files[0] != "node_exporter" {
		t.Fatalf("override kept the built-in version and files, replaced the checksum: %+v", bins)
	}
	if u, _ := bins[0].downloadURL(p.config.ReleaseBaseURL); u != "http://mirror.example/releases/node_exporter/releases/download/v1.11.1/node_exporter-1.11.1.linux-amd64.tar.gz" {
		t.Errorf("release_base_url: %s", u)
	}
	if u, _ := bins[1].downloadURL(p.config.ReleaseBaseURL); u != "http://x.example/slurm_exporter/v0.20.tgz" || bins[1].Files[0] != "slurm_exporter" {
		t.Errorf("custom url %s %+v", u, bins[1])
	}
}

func TestBinariesValidation(t *testing.T) {
	clearArkEnv(t)
	good := strings.Repeat("ab", 32)
	cases := []struct {
		raw  map[string]any
		want string
	}{
		{map[string]any{"binaries": []any{map[string]any{"name": "x", "version": "v1.0", "sha256": good}}}, `binaries[0] (x): version "v1.0" must be like 1.2.3`},
		{map[string]any{"binaries": []any{map[string]any{"name": "x", "version": "1.0", "sha256": "xyz"}}}, "binaries[0] (x): sha256 must be 64 hex digits"},
		{map[string]any{"binaries": []any{map[string]any{"name": "node_exporter", "version": "1.12.0"}}}, "binaries[0] (node_exporter): sha256 is required (version 1.12.0 is not a built-in one)"},
		{map[string]any{"binaries": []any{map[string]any{"name": "x", "version": "1"}}}, "binaries[0] (x): sha256 is required"},
		{map[string]any{"binaries": []any{map[string]any{"name": "a", "version": "1", "sha256": good}, map[string]any{"name": "a", "version": "2", "sha256": good}}}, `binaries[1]: duplicate binary "a"`},
		{map[string]any{"binaries": []any{map[string]any{"name": "a", "version": "1", "sha256": good, "files": []string{"../x"}}}}, `binaries[0] (a): file "../x" is not a plain executable name`},
		{map[string]any{"binaries": []any{map[string]any{"name": "a", "version": "1", "sha256": good, "destination": "bin"}}}, `binaries[0] (a): destination "bin" must be absolute`},
		{map[string]any{"binaries": []any{map[string]any{"name": "a", "version": "1", "sha256": good, "mode": "rwx"}}}, `binaries[0] (a): mode "rwx" must be octal`},
		{map[string]any{"binaries": []any{map[string]any{"name": "a", "version": "1", "sha256": good, "url": "{{.Nope}}"}}}, `binaries[0] (a): url:`},
		{map[string]any{"binaries": []any{map[string]any{"name": "a", "version": "1", "sha256": good, "url": "ftp://x/{{.Name}}"}}}, `binaries[0] (a): url "ftp://x/a" must be an http(s) URL`},
		{map[string]any{"binary_source": "ftp"}, `binary_source: "ftp" is not one of vm, host`},
		{map[string]any{"release_base_url": "ftp://x"}, `release_base_url "ftp://x" must be an http(s) URL`},
	}
	for _, tc := range cases {
		var p Provisioner
		err := p.Prepare(tc.raw)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

func TestVerifyAndInstallScripts(t *testing.T) {
	needs.Root(t, "installing binaries owned by root (install -o root)")
	work, dest := t.TempDir(), filepath.Join(t.TempDir(), "bin")
	good := makeTarball(t, map[string]string{"prometheus-3.5.3.linux-amd64/prometheus": "P", "prometheus-3.5.3.linux-amd64/promtool": "T", "prometheus-3.5.3.linux-amd64/LICENSE": "L"})
	other := makeTarball(t, map[string]string{"node_exporter-1.11.1.linux-amd64/node_exporter": "N"})
	bins := []Binary{
		{Name: "prometheus", Version: "3.5.3", SHA256: sha(good), Files: []string{"prometheus", "promtool"}, Destination: dest, Mode: "0755", URL: defaultBinaryURL},
		{Name: "node_exporter", Version: "1.11.1", SHA256: sha(other), Files: []string{"node_exporter"}, Destination: dest, Mode: "0750", URL: defaultBinaryURL},
	}
	if err := os.WriteFile(bins[0].tarball(work), good, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bins[1].tarball(work), good, 0o600); err != nil { // wrong content
		t.Fatal(err)
	}
	// as the VM runs them: the checks of every staged tarball (they are
	// downloads), then the installs
	script := func() *vmScript {
		sc := newScript("content", "download")
		for _, it := range binaryFetches(bins, work, "https://releases.example") {
			sc.call("fatimage_verify", it.What, it.SHA256, it.Dst, it.URL)
		}
		return sc.add(scriptInstallBinaries(bins, work))
	}
	out, err := runLocal(t, work, script())
	if err == nil || !strings.Contains(out, "; nothing installed") {
		t.Fatalf("mismatch not caught: %v\n%s", err, out)
	}
	// the error's headline is the mismatch, with both sums and the URL,
	// as the host-side fetch says it
	e := stateOf(&Config{}).commandError("binaries-fetch", "sudo -n sh -eu x.sh", 1, out)
	want := "binaries: node_exporter 1.11.1: sha256 mismatch: want " + sha(other) + ", got " + sha(good) +
		" (https://releases.example/node_exporter/releases/download/v1.11.1/node_exporter-1.11.1.linux-amd64.tar.gz); nothing installed"
	if first, _, _ := strings.Cut(e.Error(), "\n"); first != want {
		t.Errorf("headline %q\nwant     %q", first, want)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("something was installed before the checks passed: %v", err)
	}
	if err := os.WriteFile(bins[1].tarball(work), other, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = runLocal(t, work, script())
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for f, want := range map[string]string{"prometheus": "P", "promtool": "T", "node_exporter": "N"} {
		data, err := os.ReadFile(filepath.Join(dest, f))
		if err != nil || string(data) != want {
			t.Errorf("%s: %q %v", f, data, err)
		}
	}
	if st, _ := os.Stat(filepath.Join(dest, "node_exporter")); st == nil || st.Mode().Perm() != 0o750 {
		t.Errorf("mode %v", st)
	}
	if _, err := os.Stat(filepath.Join(dest, "LICENSE")); err == nil {
		t.Error("LICENSE installed")
	}
	if left, _ := filepath.Glob(filepath.Join(work, "*")); len(left) != 0 {
		t.Errorf("staging left behind: %v", left)
	}
	// again: same files are left alone
	if err := os.WriteFile(bins[0].tarball(work), good, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bins[1].tarball(work), other, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = runLocal(t, work, script())
	if err != nil || strings.Count(out, "unchanged ") != 3 || strings.Contains(out, "installed ") {
		t.Errorf("second install: %v\n%s", err, out)
	}
}

// recordingComm keeps uploads by path.
type recordingComm struct {
	packersdk.MockCommunicator
	uploads map[string][]byte
}

func (c *recordingComm) Upload(p string, r io.Reader, _ *os.FileInfo) error {
	var b bytes.Buffer
	if _, err := b.ReadFrom(r); err != nil {
		return err
	}
	c.uploads[p] = b.Bytes()
	return nil
}

func TestHostSourceUsesContentAddressedCache(t *testing.T) {
	t.Setenv("PACKER_CACHE_DIR", t.TempDir())
	tgz := makeTarball(t, map[string]string{"node_exporter-1.11.1.linux-amd64/node_exporter": "N"})
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write(tgz)
	}))
	defer srv.Close()
	comm := &recordingComm{uploads: map[string][]byte{}}
	p := stateOf(&Config{})
	p.ui, p.comm = packersdk.TestUi(t), comm
	b := Binary{Name: "node_exporter", Version: "1.11.1", SHA256: sha(tgz)}
	for i := 0; i < 2; i++ {
		if err := p.uploadCached(context.Background(), b.what(), b.SHA256, srv.URL+"/x.tar.gz", "/w/bin.tar.gz"); err != nil {
			t.Fatal(err)
		}
	}
	if hits.Load() != 1 {
		t.Errorf("downloaded %d times, want once", hits.Load())
	}
	if !bytes.Equal(comm.uploads["/w/bin.tar.gz"], tgz) {
		t.Error("uploaded content differs")
	}
	dir, _ := fetch.CacheDir()
	if _, err := os.Stat(filepath.Join(dir, sha(tgz))); err != nil {
		t.Errorf("cache entry: %v", err)
	}
	// a wrong checksum leaves nothing in the cache and uploads nothing
	bad := Binary{Name: "node_exporter", Version: "1.11.1", SHA256: strings.Repeat("0", 64)}
	comm.uploads = map[string][]byte{}
	err := p.uploadCached(context.Background(), bad.what(), bad.SHA256, srv.URL+"/x.tar.gz", "/w/bad.tar.gz")
	if err == nil || err.Error() != "binaries: node_exporter 1.11.1: sha256 mismatch: want "+strings.Repeat("0", 64)+", got "+sha(tgz)+" ("+srv.URL+"/x.tar.gz); nothing installed" || len(comm.uploads) != 0 {
		t.Errorf("bad checksum: %v, uploads %d", err, len(comm.uploads))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("cache holds %d entries, want 1", len(entries))
	}
}
