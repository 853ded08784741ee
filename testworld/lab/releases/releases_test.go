package releases

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labhttp"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

func start(t *testing.T, o Options) *Server {
	t.Helper()
	if o.Logf == nil {
		o.Logf = t.Logf
	}
	s, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

func TestServesGitHubLayout(t *testing.T) {
	cache := t.TempDir()
	s := start(t, Options{CacheDir: cache})
	wantNames := []string{
		"alertmanager-0.32.1.linux-amd64.tar.gz",
		"node_exporter-1.11.1.linux-amd64.tar.gz",
		"prometheus-3.5.3.linux-amd64.tar.gz",
	}
	var names []string
	for n := range s.Checksums() {
		names = append(names, n)
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, wantNames) {
		t.Fatalf("tarballs %v, want %v", names, wantNames)
	}

	for _, b := range s.Binaries() {
		url := s.TarballURL(b)
		if want := s.URL() + "/prometheus/" + b.Name + "/releases/download/v" + b.Version + "/" + b.Tarball(); url != want {
			t.Errorf("URL %s, want %s", url, want)
		}
		code, data := get(t, url)
		if code != 200 {
			t.Fatalf("GET %s: %d", url, code)
		}
		h := sha256.Sum256(data)
		sum := hex.EncodeToString(h[:])
		if sum != s.Checksums()[b.Tarball()] {
			t.Errorf("%s: checksum %s, Checksums() says %s", b.Tarball(), sum, s.Checksums()[b.Tarball()])
		}
		code, sums := get(t, s.ChecksumsURL(b))
		if code != 200 || string(sums) != sum+"  "+b.Tarball()+"\n" {
			t.Errorf("sha256sums.txt (%d): %q", code, sums)
		}
		// The cache holds the same bytes in the same layout.
		cached, err := os.ReadFile(filepath.Join(cache, "prometheus", b.Name, "releases", "download", "v"+b.Version, b.Tarball()))
		if err != nil || !bytes.Equal(cached, data) {
			t.Errorf("cached tarball differs: %v", err)
		}

		// Layout: one leading directory with the executables, LICENSE and NOTICE.
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		got := map[string]int64{}
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(h.Name, b.Dir()+"/") {
				t.Errorf("%s: entry %s outside %s/", b.Tarball(), h.Name, b.Dir())
			}
			if h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(mtime) {
				t.Errorf("%s: %s owner %d:%d mtime %v", b.Tarball(), h.Name, h.Uid, h.Gid, h.ModTime)
			}
			got[strings.TrimPrefix(h.Name, b.Dir()+"/")] = h.Mode
		}
		if got[""] != 0o755 || got["LICENSE"] != 0o644 || got["NOTICE"] != 0o644 {
			t.Errorf("%s: entries %v", b.Tarball(), got)
		}
		for _, f := range b.Files {
			if got[f] != 0o755 {
				t.Errorf("%s: %s mode %o", b.Tarball(), f, got[f])
			}
		}
	}

	code, _ := get(t, s.URL()+"/prometheus/prometheus/releases/download/v9.9.9/prometheus-9.9.9.linux-amd64.tar.gz")
	if code != 404 {
		t.Errorf("unknown release: %d", code)
	}
	resp, err := http.Head(s.TarballURL(s.Binaries()[0]))
	if err != nil || resp.StatusCode != 200 || resp.ContentLength <= 0 {
		t.Errorf("HEAD: %v %v", resp, err)
	}
}

// TestStandInsRun unpacks with the real tar and runs each executable.
func TestStandInsRun(t *testing.T) {
	needs.Tools(t, "tar")
	s := start(t, Options{})
	for _, b := range s.Binaries() {
		_, data := get(t, s.TarballURL(b))
		dir := t.TempDir()
		tarball := filepath.Join(dir, b.Tarball())
		if err := os.WriteFile(tarball, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("tar", "-xzf", tarball, "-C", dir).CombinedOutput(); err != nil {
			t.Fatalf("tar: %v %s", err, out)
		}
		for _, f := range b.Files {
			out, err := exec.Command(filepath.Join(dir, b.Dir(), f), "--version").CombinedOutput()
			if err != nil {
				t.Fatalf("%s --version: %v %s", f, err, out)
			}
			first := strings.SplitN(string(out), "\n", 2)[0]
			if want := f + ", version " + b.Version + " (lab stand-in)"; first != want {
				t.Errorf("%s --version: %q, want %q", f, first, want)
			}
		}
	}
}

func TestDeterministicAcrossStarts(t *testing.T) {
	a := start(t, Options{}).Checksums()
	b := start(t, Options{}).Checksums()
	if !reflect.DeepEqual(a, b) {
		t.Errorf("checksums differ between starts:\n%v\n%v", a, b)
	}
	t.Logf("checksums: %v", a)
}

func TestCustomBinariesAndAvailability(t *testing.T) {
	s := start(t, Options{Binaries: []Binary{{Name: "prometheus", Version: "3.0.0", Files: []string{"prometheus", "promtool"}}}})
	b := s.Binaries()[0]
	if code, _ := get(t, s.TarballURL(b)); code != 200 {
		t.Fatalf("GET: %d", code)
	}
	s.SetAvailable(false)
	if code, _ := get(t, s.TarballURL(b)); code != http.StatusServiceUnavailable {
		t.Errorf("unavailable: got %d", code)
	}
	s.SetAvailable(true)
	if code, _ := get(t, s.ChecksumsURL(b)); code != 200 {
		t.Errorf("available again: got %d", code)
	}
	reqs := s.Requests()
	if len(reqs) != 3 || reqs[0].Status != 200 || reqs[1].Status != 503 || reqs[2].Status != 200 ||
		reqs[0].Path != b.DownloadPath()+"/"+b.Tarball() || reqs[0].Method != "GET" {
		t.Errorf("request log: %+v", reqs)
	}
	if _, err := Start(Options{Binaries: []Binary{{Name: "x"}}}); err == nil {
		t.Error("invalid binary accepted")
	}
}

// TestServesFilesAndGrafanaPlugins: extra files by path and a Grafana
// plugin zip at grafana.com's path (query ignored), with one top
// directory holding plugin.json at the plugin's version.
func TestServesFilesAndGrafanaPlugins(t *testing.T) {
	s := start(t, Options{Files: map[string][]byte{"/a/b/x.rpm": []byte("rpm")}})
	if code, data := get(t, s.FileURL("/a/b/x.rpm")); code != http.StatusOK || string(data) != "rpm" {
		t.Errorf("file: %d %q", code, data)
	}
	sum := sha256.Sum256([]byte("rpm"))
	if s.SHA256("/a/b/x.rpm") != hex.EncodeToString(sum[:]) || s.SHA256("/nothing") != "" {
		t.Error("SHA256")
	}
	g := s.GrafanaPlugins()[0]
	code, data := get(t, s.URL()+g.Path()+"?os=linux&arch=amd64")
	if code != http.StatusOK || g.ID != "grafana-opensearch-datasource" || s.SHA256(g.Path()) == "" {
		t.Fatalf("plugin: %d %+v", code, g)
	}
	z, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range z.File {
		if !strings.HasPrefix(f.Name, g.ID+"/") {
			t.Errorf("entry %s outside the top directory", f.Name)
		}
		if f.Name == g.ID+"/plugin.json" {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			rc.Close()
			found = strings.Contains(string(b), `"version":"2.8.1"`)
		}
	}
	if !found {
		t.Error("no plugin.json at version 2.8.1")
	}
	if again, _ := PluginZip(g); !bytes.Equal(again, data) {
		t.Error("the zip is not deterministic")
	}
	if _, err := Start(Options{Files: map[string][]byte{"x": nil}}); err == nil {
		t.Error("a relative path was accepted")
	}
}

// TestServeTLSAsUpstreamHost: over HTTPS the server answers as the host
// its certificate names (grafana.com, what the appliance's
// grafana-dashboards role curls): a client trusting the lab's CA gets a
// dashboard at grafana.com's path; one trusting only the system's CAs,
// or asking for another name, is refused.
func TestServeTLSAsUpstreamHost(t *testing.T) {
	s := start(t, Options{})
	ca, err := labhttp.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue("grafana.com")
	if err != nil {
		t.Fatal(err)
	}
	addr, err := s.ServeTLS("127.0.0.1:0", cert)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ServeTLS("127.0.0.1:0", cert); err == nil {
		t.Error("a second HTTPS listener was started")
	}
	client := func(roots *x509.CertPool, name string) *http.Client {
		dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr) // name resolves to the lab, as a VM's /etc/hosts says
		}
		return &http.Client{Transport: &http.Transport{DialContext: dial, TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: name}}}
	}
	d := DefaultGrafanaDashboards()[0]
	resp, err := client(ca.Pool(), "grafana.com").Get("https://grafana.com" + d.Path())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want, _ := DashboardJSON(d)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, want) {
		t.Errorf("dashboard over HTTPS: %d %q", resp.StatusCode, body)
	}
	for name, c := range map[string]*http.Client{"system roots": client(nil, "grafana.com"), "another name": client(ca.Pool(), "github.com")} {
		if resp, err := c.Get("https://grafana.com" + d.Path()); err == nil {
			resp.Body.Close()
			t.Errorf("%s: accepted", name)
		} else if !strings.Contains(err.Error(), "certificate") {
			t.Errorf("%s: %v, want a certificate error", name, err)
		}
	}
}

// TestServePlainAsUpstreamHost: over plain HTTP on another address the
// server answers at netlib's path with the HPL stand-in, as the
// appliance's hpctests role fetches http://www.netlib.org/benchmark/hpl/...
func TestServePlainAsUpstreamHost(t *testing.T) {
	s := start(t, Options{})
	addr, err := s.ServePlain("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + HPLPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want, _ := HPLTarball()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, want) {
		t.Errorf("HPL over plain HTTP: %d, %d bytes, want the stand-in's %d", resp.StatusCode, len(body), len(want))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get("http://" + addr + HPLPath); err == nil {
		resp.Body.Close()
		t.Error("still served after Close")
	}
}
