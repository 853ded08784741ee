package pulpfake

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// serveContent answers a request that passed latency and faults.
func (s *Server) serveContent(w http.ResponseWriter, r *http.Request) {
	rel, ok := contentRel(r.URL.Path)
	if !ok {
		writeText(w, r, http.StatusNotFound, "")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeText(w, r, http.StatusMethodNotAllowed, "")
		return
	}
	if r.URL.Path == contentPrefix {
		redirectSlash(w, r)
		return
	}

	if d := s.matchDistribution(rel); d != nil {
		s.serveDistribution(w, r, d, strings.TrimPrefix(rel, d.BasePath))
		return
	}

	// Not inside a distribution: maybe an ancestor of some base paths.
	prefix := strings.TrimSuffix(rel, "/")
	entries, found := s.childSegments(prefix)
	if !found {
		writeText(w, r, http.StatusNotFound, "")
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/") {
		redirectSlash(w, r)
		return
	}
	title := rel
	if prefix == "" {
		title = "/"
	}
	writeBody(w, r, http.StatusOK, "text/html", renderListing(s.Format(), title, entries, prefix == ""))
}

// matchDistribution finds the distribution containing rel, preferring the
// longest base path should distributions nest.
func (s *Server) matchDistribution(rel string) *Distribution {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *Distribution
	for bp, d := range s.dists {
		if (rel == bp || strings.HasPrefix(rel, bp+"/")) && (best == nil || len(bp) > len(best.BasePath)) {
			best = d
		}
	}
	return best
}

// childSegments lists the next path segment (with "/") of every visible
// distribution below prefix ("" = root). found reports whether any
// distribution, hidden or not, lies below it: like pulpcore, a prefix with
// only hidden distributions below gets an empty listing, not a 404.
func (s *Server) childSegments(prefix string) (entries []string, found bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for bp, d := range s.dists {
		var rest string
		if prefix == "" {
			rest = bp
		} else if r, ok := strings.CutPrefix(bp, prefix+"/"); ok {
			rest = r
		} else {
			continue
		}
		found = true
		if d.Hidden {
			continue
		}
		seg, _, _ := strings.Cut(rest, "/")
		seen[seg+"/"] = true
	}
	for e := range seen {
		entries = append(entries, e)
	}
	slices.Sort(entries)
	return entries, found || prefix == ""
}

// serveDistribution answers a request inside d; sub is the request path
// after the base path ("" or "/...").
func (s *Server) serveDistribution(w http.ResponseWriter, r *http.Request, d *Distribution, sub string) {
	if d.Guard != nil {
		if ok, reason := d.Guard.permit(r); !ok {
			writeText(w, r, http.StatusForbidden, reason)
			return
		}
	}
	if sub == "" {
		redirectSlash(w, r)
		return
	}
	if d.NoPublication {
		writeText(w, r, http.StatusNotFound, "")
		return
	}
	sub = sub[1:] // drop the "/" after the base path
	wantDir := sub == "" || strings.HasSuffix(sub, "/")
	name := strings.TrimSuffix(sub, "/")
	if !cleanRel(name) {
		writeText(w, r, http.StatusNotFound, "")
		return
	}

	t, err := d.tree()
	if err != nil {
		writeText(w, r, http.StatusNotFound, "")
		return
	}
	defer t.close()

	isDir, exists := t.stat(name)
	switch {
	case isDir && !wantDir:
		redirectSlash(w, r)
	case isDir:
		entries, err := t.list(name)
		if err != nil {
			writeText(w, r, http.StatusNotFound, "")
			return
		}
		// Like pulpcore, listings inside a distribution are titled with
		// the full request path.
		writeBody(w, r, http.StatusOK, "text/html", renderListing(s.Format(), r.URL.Path, entries, false))
	case wantDir:
		writeText(w, r, http.StatusNotFound, "")
	case d.RedirectURL != "":
		// Files live in object storage; the content app only hands out a
		// redirect, whether or not it knows the file.
		w.Header().Set("Location", strings.TrimSuffix(d.RedirectURL, "/")+"/"+escapeRel(name))
		writeText(w, r, http.StatusFound, "")
	case !exists:
		writeText(w, r, http.StatusNotFound, "")
	default:
		s.serveFile(w, r, t, name)
	}
}

func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, t tree, name string) {
	f, mod, err := t.open(name)
	if err != nil {
		writeText(w, r, http.StatusNotFound, "")
		return
	}
	if c, ok := f.(io.Closer); ok {
		defer c.Close()
	}
	h := w.Header()
	h.Set("Content-Type", contentType(name))
	switch name {
	case "repodata/repomd.xml", "repodata/repomd.xml.asc", "repodata/repomd.xml.key":
		// pulp_rpm marks repository metadata uncacheable so mirrors and
		// clients always see the current snapshot state.
		h.Set("Cache-Control", "no-cache")
	}
	http.ServeContent(w, r, path.Base(name), mod, f)
}

// permit checks HTTP Basic credentials. There is deliberately no 401
// challenge: pulpcore guards answer 403 straight away.
func (g *Guard) permit(r *http.Request) (bool, string) {
	reason := g.Reason
	if reason == "" {
		reason = DefaultGuardReason
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false, reason
	}
	want, known := g.Users[user]
	if !known || subtle.ConstantTimeCompare([]byte(pass), []byte(want)) != 1 {
		return false, reason
	}
	return true, ""
}

// redirectSlash answers 301 to the request path plus "/", keeping the query.
func redirectSlash(w http.ResponseWriter, r *http.Request) {
	loc := r.URL.EscapedPath() + "/"
	if r.URL.RawQuery != "" {
		loc += "?" + r.URL.RawQuery
	}
	w.Header().Set("Location", loc)
	writeText(w, r, http.StatusMovedPermanently, "")
}

// cleanRel rejects empty, "." and ".." segments so no request can climb out
// of a distribution's directory ("" itself is the distribution root).
func cleanRel(name string) bool {
	if name == "" {
		return true
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsRune(seg, 0) {
			return false
		}
	}
	return true
}

func escapeRel(name string) string {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// contentType follows the types pulpcore's mime table yields for RPM
// repository files; the system mime database is not consulted so answers do
// not vary between machines.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".xml":
		return "application/xml"
	case ".gz":
		return "application/gzip"
	case ".bz2":
		return "application/x-bzip2"
	case ".xz":
		return "application/x-xz"
	case ".zst":
		return "application/zstd"
	case ".rpm":
		return "application/x-rpm"
	case ".asc", ".key", ".txt":
		return "text/plain"
	case ".html":
		return "text/html"
	case ".json":
		return "application/json"
	}
	return "application/octet-stream"
}

// tree is the content of one distribution. Paths are slash-separated,
// relative and already checked by cleanRel.
type tree interface {
	stat(name string) (isDir, exists bool)
	list(dir string) ([]string, error)
	open(name string) (io.ReadSeeker, time.Time, error)
	close()
}

func (d *Distribution) tree() (tree, error) {
	switch {
	case d.Dir != "":
		root, err := os.OpenRoot(d.Dir)
		if err != nil {
			return nil, err
		}
		return dirTree{root}, nil
	case d.Files != nil:
		return mapTree{files: d.Files, mod: snapshotTime(d.BasePath)}, nil
	default:
		return syntheticTree(d.BasePath), nil
	}
}

// dirTree serves a real directory through os.Root, which also refuses
// symlinks that point outside it.
type dirTree struct{ root *os.Root }

func (t dirTree) rootName(name string) string {
	if name == "" {
		return "."
	}
	return name
}

func (t dirTree) stat(name string) (bool, bool) {
	fi, err := t.root.Stat(t.rootName(name))
	if err != nil {
		return false, false
	}
	return fi.IsDir(), true
}

func (t dirTree) list(dir string) ([]string, error) {
	f, err := t.root.Open(t.rootName(dir))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		n := de.Name()
		isDir := de.IsDir()
		if de.Type()&fs.ModeSymlink != 0 {
			// Only list links that resolve inside the root.
			fi, err := t.root.Stat(path.Join(dir, n))
			if err != nil {
				continue
			}
			isDir = fi.IsDir()
		}
		if isDir {
			n += "/"
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

func (t dirTree) open(name string) (io.ReadSeeker, time.Time, error) {
	f, err := t.root.Open(name)
	if err != nil {
		return nil, time.Time{}, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, time.Time{}, errors.Join(err, fs.ErrNotExist)
	}
	return f, fi.ModTime(), nil
}

func (t dirTree) close() { t.root.Close() }

// mapTree serves in-memory files; directories are implied by the paths.
type mapTree struct {
	files map[string][]byte
	mod   time.Time
}

func (t mapTree) stat(name string) (bool, bool) {
	if name == "" {
		return true, true
	}
	if _, ok := t.files[name]; ok {
		return false, true
	}
	for k := range t.files {
		if strings.HasPrefix(k, name+"/") {
			return true, true
		}
	}
	return false, false
}

func (t mapTree) list(dir string) ([]string, error) {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	seen := map[string]bool{}
	for k := range t.files {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		if seg, _, isDir := strings.Cut(rest, "/"); isDir {
			seen[seg+"/"] = true
		} else {
			seen[seg] = true
		}
	}
	out := make([]string, 0, len(seen))
	for e := range seen {
		out = append(out, e)
	}
	slices.Sort(out)
	return out, nil
}

func (t mapTree) open(name string) (io.ReadSeeker, time.Time, error) {
	b, ok := t.files[name]
	if !ok {
		return nil, time.Time{}, fs.ErrNotExist
	}
	return bytes.NewReader(b), t.mod, nil
}

func (t mapTree) close() {}
