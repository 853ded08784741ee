// Package pypi is the lab's Python package index: a PEP 503 "simple"
// repository API (what pip speaks) serving small pure-Python wheels the
// lab builds itself under the names and pinned versions the appliance
// installs. Each wheel's module has __version__ set, so a test can import
// it and see which version it got. Wheels are built deterministically
// (fixed zip times), so their sha256s — usable with --require-hashes —
// are the same on every run.
package pypi

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labhttp"
)

// Dist is one released distribution.
type Dist struct {
	Name     string   // as published, e.g. "jupyter_server"
	Version  string   // e.g. "2.20.0"
	Requires []string // Requires-Dist lines, e.g. "notebook==7.6.0"
	// Scripts are console scripts (entry points) pip puts in the venv's
	// bin/; each prints "<name> <version>".
	Scripts []string
}

// Module is the importable top-level module: the normalized name with
// "-" and "." as "_".
func (d Dist) Module() string { return strings.ReplaceAll(Normalize(d.Name), "-", "_") }

// Wheel is the wheel file name.
func (d Dist) Wheel() string {
	return fmt.Sprintf("%s-%s-py3-none-any.whl", d.Module(), d.Version)
}

// DefaultDists are distributions the appliance pins (Open OnDemand's
// jupyter requirements, slurm-openstack-tools' dependencies, the plugin's
// pins of the ansible-init venv), two
// versions of some so a wrong pin shows.
func DefaultDists() []Dist {
	return []Dist{
		{Name: "jupyter", Version: "1.1.1", Requires: []string{"notebook", "jupyterlab"}},
		{Name: "jupyterlab", Version: "4.6.1", Requires: []string{"jupyter_server>=2.0"}},
		{Name: "jupyterlab", Version: "4.6.2", Requires: []string{"jupyter_server>=2.0"}},
		{Name: "notebook", Version: "7.6.0", Requires: []string{"jupyter_server>=2.0"}},
		{Name: "jupyter_server", Version: "2.20.0"},
		{Name: "ipykernel", Version: "7.3.0"},
		{Name: "openstacksdk", Version: "4.1.0"},
		{Name: "python-novaclient", Version: "18.7.0"},
		// slurm-openstack-tools' other dependencies (the lab's stand-in
		// project in the git server requires them, as the real one does)
		{Name: "pbr", Version: "6.1.1"},
		{Name: "ClusterShell", Version: "1.9.3"},
		// the ansible-init venv of the built-in group ansible_init
		{Name: "ansible", Version: "8.7.0"},
		{Name: "jmespath", Version: "1.0.1"},
		{Name: "requests", Version: "2.32.3"},
		{Name: "netaddr", Version: "1.3.0"},
		// the mysql group's client libraries in /usr/bin/python3.9
		{Name: "PyMySQL", Version: "1.1.1"},
		{Name: "PyMySQL", Version: "1.1.2"},
		{Name: "cryptography", Version: "43.0.3"},
		// the desktop's websockify venv (bin/websockify)
		{Name: "websockify", Version: "0.13.0", Scripts: []string{"websockify"}},
	}
}

var reNorm = regexp.MustCompile(`[-_.]+`)

// Normalize is PEP 503's name normalization.
func Normalize(name string) string { return strings.ToLower(reNorm.ReplaceAllString(name, "-")) }

// Options configures Start.
type Options struct {
	Addr  string // default "127.0.0.1:0"
	Dists []Dist // default DefaultDists()
	Logf  func(format string, args ...any)
}

// Server serves the index.
type Server struct {
	*labhttp.Server
	mu       sync.RWMutex        // Add's writes against serve's reads
	files    map[string][]byte   // "/packages/<wheel>" -> content
	projects map[string][]string // normalized name -> wheel names
	sums     map[string]string   // wheel name -> sha256
	dists    []Dist
}

// mtime is the fixed time of every zip entry.
var mtime = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// Start builds the wheels and serves them.
func Start(o Options) (*Server, error) {
	if len(o.Dists) == 0 {
		o.Dists = DefaultDists()
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	s := &Server{files: map[string][]byte{}, projects: map[string][]string{}, sums: map[string]string{}}
	if err := s.Add(o.Dists...); err != nil {
		return nil, err
	}
	var err error
	if s.Server, err = labhttp.Start("package index", o.Addr, http.HandlerFunc(s.serve)); err != nil {
		return nil, err
	}
	o.Logf("pypi: serving %d wheels at %s", len(o.Dists), s.IndexURL())
	return s, nil
}

// Add builds and serves dists besides the ones served, skipping those
// already served (same name and version): a test adds what the software
// it runs pins (the appliance's jupyter requirements).
func (s *Server) Add(dists ...Dist) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range dists {
		if _, ok := s.sums[d.Wheel()]; ok {
			continue
		}
		w, err := BuildWheel(d)
		if err != nil {
			return err
		}
		h := sha256.Sum256(w)
		s.files["/packages/"+d.Wheel()] = w
		s.sums[d.Wheel()] = hex.EncodeToString(h[:])
		n := Normalize(d.Name)
		s.projects[n] = append(s.projects[n], d.Wheel())
		s.dists = append(s.dists, d)
	}
	return nil
}

// BuildWheel makes d's wheel: the module, METADATA, WHEEL and RECORD.
func BuildWheel(d Dist) ([]byte, error) {
	if d.Name == "" || d.Version == "" {
		return nil, fmt.Errorf("pypi: invalid dist %+v", d)
	}
	info := fmt.Sprintf("%s-%s.dist-info", d.Module(), d.Version)
	var meta strings.Builder
	fmt.Fprintf(&meta, "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: lab stand-in for %s\n", d.Name, d.Version, d.Name)
	for _, r := range d.Requires {
		fmt.Fprintf(&meta, "Requires-Dist: %s\n", r)
	}
	init := fmt.Sprintf("__version__ = %q\n", d.Version)
	if len(d.Scripts) > 0 {
		init += fmt.Sprintf("\n\ndef main():\n    print(%q, __version__)\n", d.Name)
	}
	files := [][2]string{
		{d.Module() + "/__init__.py", init},
		{info + "/METADATA", meta.String()},
		{info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: fatimage-lab\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	if len(d.Scripts) > 0 {
		var ep strings.Builder
		ep.WriteString("[console_scripts]\n")
		for _, sc := range d.Scripts {
			fmt.Fprintf(&ep, "%s = %s:main\n", sc, d.Module())
		}
		files = append(files, [2]string{info + "/entry_points.txt", ep.String()})
	}
	var record strings.Builder
	for _, f := range files {
		h := sha256.Sum256([]byte(f[1]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f[0], base64.RawURLEncoding.EncodeToString(h[:]), len(f[1]))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", info)
	files = append(files, [2]string{info + "/RECORD", record.String()})
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f[0], Method: zip.Deflate, Modified: mtime})
		if err != nil {
			return nil, err
		}
		if _, err := io.WriteString(w, f[1]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// IndexURL is pip's --index-url: URL()/simple.
func (s *Server) IndexURL() string { return s.URL() + "/simple" }

// WheelSHA256 is the sha256 of d's wheel ("" if not served).
func (s *Server) WheelSHA256(d Dist) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sums[d.Wheel()]
}

// Dists are the served distributions.
func (s *Server) Dists() []Dist {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.dists)
}

// serve answers /simple/, /simple/<project>/ and /packages/<wheel>.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		http.Error(w, "405 Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	p := r.URL.Path
	if data, ok := s.files[p]; ok {
		w.Header().Set("Content-Type", "application/octet-stream")
		http.ServeContent(w, r, "", mtime, bytes.NewReader(data))
		return
	}
	if p == "/simple" || (strings.HasPrefix(p, "/simple/") && !strings.HasSuffix(p, "/")) {
		// PEP 503: the URLs end in a slash; redirect like PyPI does
		http.Redirect(w, r, p+"/", http.StatusMovedPermanently)
		return
	}
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.0\"><title>Simple index</title></head><body>\n")
	if p == "/simple/" {
		names := make([]string, 0, len(s.projects))
		for n := range s.projects {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(&b, "<a href=\"%s/\">%s</a>\n", n, html.EscapeString(n))
		}
	} else {
		name := strings.TrimSuffix(strings.TrimPrefix(p, "/simple/"), "/")
		if Normalize(name) != name {
			http.Redirect(w, r, "/simple/"+Normalize(name)+"/", http.StatusMovedPermanently)
			return
		}
		wheels, ok := s.projects[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		for _, wh := range wheels {
			fmt.Fprintf(&b, "<a href=\"../../packages/%s#sha256=%s\">%s</a>\n", wh, s.sums[wh], html.EscapeString(wh))
		}
	}
	b.WriteString("</body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, b.String()) //nolint:errcheck // client gone
}
