// Package releases is the lab's stand-in for GitHub release downloads of
// the monitoring binaries (node_exporter, prometheus, alertmanager): an
// HTTP server with the GitHub "releases/download" layout, serving small
// deterministic tarballs whose executables are shell scripts that print
// their version, and the sha256sums.txt files Prometheus publishes.
//
// The checksums differ from the real upstream ones (the contents are
// stand-ins); use Checksums to pin them.
package releases

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/tls"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/httprec"
)

// Owner is the GitHub organisation in the served paths.
const Owner = "prometheus"

// Platform is the only platform built.
const Platform = "linux-amd64"

// mtime is the fixed modification time of every tar entry and served file.
var mtime = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// Binary is one released project.
type Binary struct {
	Name    string   // e.g. "prometheus"
	Version string   // without "v", e.g. "3.5.3"
	Files   []string // executables in the tarball, e.g. ["prometheus", "promtool"]
}

// Tarball is the release asset name, "<name>-<ver>.linux-amd64.tar.gz".
func (b Binary) Tarball() string { return b.Dir() + ".tar.gz" }

// Dir is the single top-level directory inside the tarball.
func (b Binary) Dir() string { return fmt.Sprintf("%s-%s.%s", b.Name, b.Version, Platform) }

// DownloadPath is the path of the release's download directory,
// "/prometheus/<name>/releases/download/v<ver>".
func (b Binary) DownloadPath() string {
	return fmt.Sprintf("/%s/%s/releases/download/v%s", Owner, b.Name, b.Version)
}

// DefaultBinaries are the versions the appliance installs.
func DefaultBinaries() []Binary {
	return []Binary{
		{Name: "node_exporter", Version: "1.11.1", Files: []string{"node_exporter"}},
		{Name: "prometheus", Version: "3.5.3", Files: []string{"prometheus", "promtool"}},
		{Name: "alertmanager", Version: "0.32.1", Files: []string{"alertmanager", "amtool"}},
	}
}

// Options configures Start.
type Options struct {
	Addr     string   // listen address; default "127.0.0.1:0"
	CacheDir string   // optional: assets are also written here, in the served layout
	Binaries []Binary // default DefaultBinaries()
	// Files are served as they are, by URL path (RPMs by URL).
	Files map[string][]byte
	// GrafanaPlugins are served as zips at grafana.com's paths
	// (GrafanaPlugin.Path); default DefaultGrafanaPlugins().
	GrafanaPlugins []GrafanaPlugin
	Logf           func(format string, args ...any)
}

// Request is one entry of the request log.
type Request struct {
	Method string
	Path   string
	Status int
	Time   time.Time
}

// Server serves the release assets. Its methods are safe for concurrent use.
type Server struct {
	binaries  []Binary
	files     map[string][]byte // URL path -> content
	checksums map[string]string // tarball name -> sha256 hex
	plugins   []GrafanaPlugin
	available atomic.Bool
	logf      func(string, ...any)

	mu       sync.Mutex
	requests []Request

	ln  net.Listener
	srv *http.Server
	// also serve the same assets on upstream hosts' ports: HTTPS
	// (ServeTLS, at most one) and plain HTTP (ServePlain)
	also  []*http.Server
	tlsOn bool
}

// Start builds the assets and starts serving them.
func Start(o Options) (*Server, error) {
	s := &Server{
		binaries:  slices.Clone(o.Binaries),
		files:     map[string][]byte{},
		checksums: map[string]string{},
		logf:      o.Logf,
	}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	if len(s.binaries) == 0 {
		s.binaries = DefaultBinaries()
	}
	sums := map[string][]string{} // download dir -> sha256sums.txt lines
	for _, b := range s.binaries {
		if b.Name == "" || b.Version == "" || len(b.Files) == 0 || strings.ContainsAny(b.Name+b.Version, "/ ") {
			return nil, fmt.Errorf("releases: invalid binary %+v", b)
		}
		data, err := Tarball(b)
		if err != nil {
			return nil, err
		}
		h := sha256.Sum256(data)
		sum := hex.EncodeToString(h[:])
		s.checksums[b.Tarball()] = sum
		s.files[b.DownloadPath()+"/"+b.Tarball()] = data
		sums[b.DownloadPath()] = append(sums[b.DownloadPath()], sum+"  "+b.Tarball())
	}
	for dir, lines := range sums {
		sort.Slice(lines, func(i, j int) bool { return lines[i][66:] < lines[j][66:] })
		s.files[dir+"/sha256sums.txt"] = []byte(strings.Join(lines, "\n") + "\n")
	}
	if err := s.addExtras(o); err != nil {
		return nil, err
	}
	if o.CacheDir != "" {
		if err := s.writeCache(o.CacheDir); err != nil {
			return nil, err
		}
	}
	s.available.Store(true)

	addr := o.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("releases: listen: %w", err)
	}
	s.ln = ln
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go s.srv.Serve(ln) //nolint:errcheck // ErrServerClosed on Close
	s.logf("releases: serving %d binaries at %s", len(s.binaries), s.URL())
	return s, nil
}

// writeCache mirrors the served files under dir (unchanged files are left alone).
func (s *Server) writeCache(dir string) error {
	for p, data := range s.files {
		dst := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, "/")))
		if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, data) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		tmp := dst + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, dst); err != nil {
			return err
		}
	}
	return nil
}

// URL is the base URL, "http://host:port"; assets are at
// URL() + Binary.DownloadPath() + "/" + Binary.Tarball().
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// TarballURL is the download URL of b's tarball.
func (s *Server) TarballURL(b Binary) string { return s.URL() + b.DownloadPath() + "/" + b.Tarball() }

// ChecksumsURL is the URL of b's sha256sums.txt.
func (s *Server) ChecksumsURL(b Binary) string { return s.URL() + b.DownloadPath() + "/sha256sums.txt" }

// Binaries returns the served binaries.
func (s *Server) Binaries() []Binary { return slices.Clone(s.binaries) }

// Checksums maps each tarball name to its sha256 (hex).
func (s *Server) Checksums() map[string]string {
	out := make(map[string]string, len(s.checksums))
	for k, v := range s.checksums {
		out[k] = v
	}
	return out
}

// SetAvailable(false) makes every request answer 503, as an unreachable
// upstream would for host-side tests. (VMs are cut off by the lab's
// firewall instead.)
func (s *Server) SetAvailable(ok bool) { s.available.Store(ok) }

// Requests returns a copy of the request log.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// ServeTLS also serves the assets over HTTPS on addr with cert, as the
// upstream host cert names answers at its own URLs: the appliance's
// grafana-dashboards role curls https://grafana.com/api/dashboards/...
// with no variable for the host, so a site behind a mirror resolves
// grafana.com to its mirror and trusts the mirror's CA. Once per server;
// it returns the address listened on.
func (s *Server) ServeTLS(addr string, cert tls.Certificate) (string, error) {
	s.mu.Lock()
	on := s.tlsOn
	s.tlsOn = true
	s.mu.Unlock()
	if on {
		return "", errors.New("releases: already serving HTTPS")
	}
	ln, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return "", fmt.Errorf("releases: listen (HTTPS): %w", err)
	}
	return s.serveAlso(ln, "HTTPS"), nil
}

// ServePlain also serves the assets over plain HTTP on addr, as an
// upstream reached by an http:// URL answers (the appliance's hpctests
// role get_urls http://www.netlib.org/benchmark/hpl/...). It returns
// the address listened on.
func (s *Server) ServePlain(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("releases: listen (HTTP): %w", err)
	}
	return s.serveAlso(ln, "HTTP"), nil
}

func (s *Server) serveAlso(ln net.Listener, what string) string {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	s.mu.Lock()
	s.also = append(s.also, srv)
	s.mu.Unlock()
	go srv.Serve(ln) //nolint:errcheck // ErrServerClosed on Close
	s.logf("releases: serving %s at %s", what, ln.Addr())
	return ln.Addr().String()
}

// Close stops the server.
func (s *Server) Close() error {
	errs := []error{s.srv.Close()}
	s.mu.Lock()
	for _, srv := range s.also {
		errs = append(errs, srv.Close())
	}
	s.mu.Unlock()
	for i, err := range errs {
		if errors.Is(err, http.ErrServerClosed) {
			errs[i] = nil
		}
	}
	return errors.Join(errs...)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &httprec.Recorder{ResponseWriter: w}
	defer func() {
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Status: rec.Status, Time: time.Now()})
		s.mu.Unlock()
	}()
	switch {
	case !s.available.Load():
		http.Error(rec, "503 Service Unavailable (lab: releases switched off)", http.StatusServiceUnavailable)
		return
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		rec.Header().Set("Allow", "GET, HEAD")
		http.Error(rec, "405 Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	data, ok := s.files[path.Clean(r.URL.Path)]
	if !ok {
		http.Error(rec, "Not Found", http.StatusNotFound)
		return
	}
	ct := "application/octet-stream"
	if strings.HasSuffix(r.URL.Path, ".txt") {
		ct = "text/plain; charset=utf-8"
	}
	rec.Header().Set("Content-Type", ct)
	http.ServeContent(rec, r, path.Base(r.URL.Path), mtime, bytes.NewReader(data))
}

// Tarball builds b's release tarball deterministically (tarGz).
func Tarball(b Binary) ([]byte, error) {
	entries := []tarEntry{
		{"LICENSE", license, 0o644},
		{"NOTICE", fmt.Sprintf("%s\nLab stand-in of the Prometheus project's %s %s release.\n", b.Name, b.Name, b.Version), 0o644},
	}
	switch b.Name {
	case "prometheus":
		entries = append(entries, tarEntry{"prometheus.yml", prometheusYML, 0o644})
	case "alertmanager":
		entries = append(entries, tarEntry{"alertmanager.yml", alertmanagerYML, 0o644})
	}
	for _, f := range b.Files {
		if f == "" || strings.ContainsAny(f, "/ ") {
			return nil, fmt.Errorf("releases: invalid file name %q", f)
		}
		entries = append(entries, tarEntry{f, standIn(f, b), 0o755})
	}
	return tarGz(b.Dir(), entries)
}

// tarEntry is one file of a tarball's top directory.
type tarEntry struct {
	name string
	data string
	mode int64
}

// tarGz is a gzipped tarball of entries under the directory top, built
// deterministically: fixed mtimes, root ownership, sorted entries, no
// gzip timestamp or name.
func tarGz(top string, entries []tarEntry) ([]byte, error) {
	entries = slices.Clone(entries)
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })

	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	hdr := func(name string, typ byte, mode, size int64) *tar.Header {
		return &tar.Header{
			Name: name, Typeflag: typ, Mode: mode, Size: size, ModTime: mtime,
			Uid: 0, Gid: 0, Uname: "root", Gname: "root", Format: tar.FormatUSTAR, // no PAX records: stable bytes
		}
	}
	if err := tw.WriteHeader(hdr(top+"/", tar.TypeDir, 0o755, 0)); err != nil {
		return nil, err
	}
	for _, e := range entries {
		if err := tw.WriteHeader(hdr(top+"/"+e.name, tar.TypeReg, e.mode, int64(len(e.data)))); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(tw, e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// standIn is the executable: "--version" (and "-version", "version")
// prints Prometheus-style version information; anything else says what it
// is and exits 0.
func standIn(file string, b Binary) string {
	return strings.NewReplacer("@FILE@", file, "@NAME@", b.Name, "@VERSION@", b.Version).Replace(binaryStandIn)
}

// binaryStandIn is the stand-in program, a file so that shellcheck checks it.
//
//go:embed standins/binary.sh
var binaryStandIn string

const license = `                                 Apache License
                           Version 2.0, January 2004
                        http://www.apache.org/licenses/

   (Lab stand-in: the real release carries the full Apache License 2.0 text.)
`

const prometheusYML = `# Lab stand-in of the sample configuration shipped in the release.
global:
  scrape_interval: 15s
scrape_configs:
  - job_name: "prometheus"
    static_configs:
      - targets: ["localhost:9090"]
`

const alertmanagerYML = `# Lab stand-in of the sample configuration shipped in the release.
route:
  receiver: "web.hook"
receivers:
  - name: "web.hook"
    webhook_configs:
      - url: "http://127.0.0.1:5001/"
`
