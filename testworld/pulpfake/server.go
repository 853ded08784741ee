// Package pulpfake is a test double of the Pulp 3 content app as it serves
// RPM repository snapshots: distribution listings in the HTML formats of
// several pulpcore generations, content guards, deleted publications,
// redirects to object storage, and injectable faults and latency.
//
// A JSON control endpoint under /_control/ lets a separate process steer a
// running instance (see cmd/fakepulp).
package pulpfake

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/faultinject"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/httprec"
)

// contentPrefix is where pulpcore mounts its content app by default.
const contentPrefix = "/pulp/content"

// Guard is a basic-auth content guard. Requests reaching a guarded
// distribution need an Authorization header for one of Users.
type Guard struct {
	Users  map[string]string `json:"users,omitempty"`  // username -> password
	Reason string            `json:"reason,omitempty"` // 403 body is "403: " + Reason; default "Access denied."
}

// DefaultGuardReason is used when Guard.Reason is empty.
const DefaultGuardReason = "Access denied."

// Distribution is one served base path, typically a snapshot
// "<pulp_path>/<timestamp>".
type Distribution struct {
	BasePath      string `json:"base_path"`                // without leading/trailing slash
	Hidden        bool   `json:"hidden,omitempty"`         // not listed, but still served
	NoPublication bool   `json:"no_publication,omitempty"` // publication deleted: listed, but 404 inside
	Guard         *Guard `json:"guard,omitempty"`          // nil: open
	Dir           string `json:"dir,omitempty"`            // serve real content from this directory
	RedirectURL   string `json:"redirect_url,omitempty"`   // non-empty: files answer 302 to RedirectURL + relative path

	// Files is in-memory content (relative path -> data), used when Dir is
	// empty. With neither Dir nor Files a synthetic repodata/repomd.xml is
	// served.
	Files map[string][]byte `json:"files,omitempty"`
}

// Options configures a Server.
type Options struct {
	Addr    string        // listen address; default "127.0.0.1:0"
	Format  Format        // listing format
	Latency time.Duration // added to every content request before it is answered
	Link    Link          // the network between the clients and the server
}

// Request is one entry of the request log. The password is never recorded.
type Request struct {
	Method   string    `json:"method"`
	Path     string    `json:"path"`
	Username string    `json:"username,omitempty"`
	HasAuth  bool      `json:"has_auth"`
	Status   int       `json:"status"` // 0: no answer (client went away or server closed first)
	Time     time.Time `json:"time"`   // arrival time
}

// Server is the fake content app. All methods are safe for concurrent use.
type Server struct {
	addr    string
	format  atomic.Int32
	latency atomic.Int64
	linkMu  sync.Mutex
	link    Link

	mu       sync.Mutex
	dists    map[string]*Distribution // by base path; values are never mutated
	requests []Request

	faults  *faultinject.Injector
	content http.Handler // serveContent behind the faults

	control http.Handler
	closing chan struct{} // closed by Close to release hanging requests

	startMu   sync.Mutex
	listener  net.Listener
	srv       *http.Server
	closeOnce sync.Once
	closeErr  error
}

// New returns a server that is not yet listening; use Start, or mount
// Handler() yourself (e.g. with httptest).
func New(opts Options) *Server {
	s := &Server{
		addr:    opts.Addr,
		dists:   map[string]*Distribution{},
		closing: make(chan struct{}),
	}
	if s.addr == "" {
		s.addr = "127.0.0.1:0"
	}
	s.format.Store(int32(opts.Format))
	s.latency.Store(int64(opts.Latency))
	s.link = opts.Link
	s.control = s.newControlHandler()
	s.faults = s.newFaults()
	// Faults only concern the content app.
	s.content = s.faults.Wrap("", contentPrefix+"/", http.HandlerFunc(s.serveContent))
	return s
}

// ValidateBasePath reports whether p (after trimming slashes) is usable as a
// distribution base path.
func ValidateBasePath(p string) error {
	p = strings.Trim(p, "/")
	if p == "" {
		return errors.New("pulpfake: empty base path")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("pulpfake: invalid base path %q", p)
		}
	}
	return nil
}

// AddDistribution adds d, replacing any distribution with the same base
// path. It panics on an invalid base path (see ValidateBasePath), which is a
// programming error in the caller.
func (s *Server) AddDistribution(d Distribution) {
	if err := ValidateBasePath(d.BasePath); err != nil {
		panic(err)
	}
	d.BasePath = strings.Trim(d.BasePath, "/")
	// Deep-copy so later changes by the caller cannot race with handlers.
	if d.Guard != nil {
		g := *d.Guard
		g.Users = make(map[string]string, len(d.Guard.Users))
		for u, p := range d.Guard.Users {
			g.Users[u] = p
		}
		d.Guard = &g
	}
	if d.Files != nil {
		files := make(map[string][]byte, len(d.Files))
		for k, v := range d.Files {
			files[strings.Trim(k, "/")] = slices.Clone(v)
		}
		d.Files = files
	}
	s.mu.Lock()
	s.dists[d.BasePath] = &d
	s.mu.Unlock()
}

// AddSnapshots adds an open distribution pulpPath/ts for each timestamp.
func (s *Server) AddSnapshots(pulpPath string, timestamps ...string) {
	pulpPath = strings.Trim(pulpPath, "/")
	for _, ts := range timestamps {
		s.AddDistribution(Distribution{BasePath: pulpPath + "/" + ts})
	}
}

// RemoveDistribution removes the distribution with the given base path and
// reports whether it existed.
func (s *Server) RemoveDistribution(basePath string) bool {
	basePath = strings.Trim(basePath, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.dists[basePath]
	delete(s.dists, basePath)
	return ok
}

// Distributions returns copies of all distributions sorted by base path.
func (s *Server) Distributions() []Distribution {
	s.mu.Lock()
	out := make([]Distribution, 0, len(s.dists))
	for _, d := range s.dists {
		out = append(out, *d)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Distribution) int { return strings.Compare(a.BasePath, b.BasePath) })
	return out
}

// SetFormat switches the listing format.
func (s *Server) SetFormat(f Format) { s.format.Store(int32(f)) }

// Format returns the current listing format.
func (s *Server) Format() Format { return Format(s.format.Load()) }

// SetLatency sets the delay added to every content request.
func (s *Server) SetLatency(d time.Duration) { s.latency.Store(int64(d)) }

// Latency returns the delay added to every content request.
func (s *Server) Latency() time.Duration { return time.Duration(s.latency.Load()) }

// Requests returns a copy of the request log, in the order requests were
// answered. Control endpoint requests are not logged.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// ResetRequests empties the request log.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	s.requests = nil
	s.mu.Unlock()
}

// Start listens on Options.Addr and serves in the background.
func (s *Server) Start() error {
	s.startMu.Lock()
	defer s.startMu.Unlock()
	if s.srv != nil {
		return errors.New("pulpfake: server already started")
	}
	select {
	case <-s.closing:
		return errors.New("pulpfake: server closed")
	default:
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("pulpfake: listen: %w", err)
	}
	ln = newLinkListener(ln, s.Link)
	s.listener = ln
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		// Aborted hangs and vanished clients are expected; keep test output clean.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go s.srv.Serve(ln) //nolint:errcheck // returns ErrServerClosed on Close
	return nil
}

// URL returns "http://host:port" once started, "" before.
func (s *Server) URL() string {
	s.startMu.Lock()
	defer s.startMu.Unlock()
	if s.listener == nil {
		return ""
	}
	return "http://" + s.listener.Addr().String()
}

// ContentURL returns URL() + "/pulp/content".
func (s *Server) ContentURL() string { return s.URL() + contentPrefix }

// Handler returns the server's handler, for use with httptest or a mux.
// Requests that are abandoned (client gone during latency or a hang, or the
// server closing) panic with http.ErrAbortHandler so net/http drops the
// connection instead of sending an empty 200; call it through an
// http.Server, not directly with a ResponseRecorder, when using those.
func (s *Server) Handler() http.Handler { return s }

// Close stops the server and releases hanging requests. It is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.startMu.Lock()
		srv := s.srv
		s.startMu.Unlock()
		if srv == nil {
			return
		}
		// Close, not Shutdown: clients keep pre-dialled connections that
		// never carry a request, and Shutdown would wait seconds for them.
		s.closeErr = srv.Close()
	})
	return s.closeErr
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/_control" || strings.HasPrefix(r.URL.Path, "/_control/") {
		s.control.ServeHTTP(w, r)
		return
	}

	rec := &httprec.Recorder{ResponseWriter: w}
	entry := Request{Method: r.Method, Path: r.URL.Path, Time: time.Now()}
	entry.HasAuth = r.Header.Get("Authorization") != ""
	if u, _, ok := r.BasicAuth(); ok {
		entry.Username = u
	}
	defer func() {
		entry.Status = rec.Status
		s.mu.Lock()
		s.requests = append(s.requests, entry)
		s.mu.Unlock()
	}()

	if !faultinject.Sleep(r.Context(), s.closing, s.Latency()) {
		abort()
	}

	s.content.ServeHTTP(rec, r)
}

// contentRel returns the path below /pulp/content/ ("" for the root itself).
func contentRel(p string) (string, bool) {
	if p == contentPrefix {
		return "", true
	}
	rel, ok := strings.CutPrefix(p, contentPrefix+"/")
	return rel, ok
}

// abort drops the connection without a response; returning normally would
// make net/http send an empty 200.
func abort() { panic(http.ErrAbortHandler) }

// writeText answers like aiohttp's HTTP exceptions: "<code>: <reason>" as
// text/plain. An empty reason uses the standard status text.
func writeText(w http.ResponseWriter, r *http.Request, status int, reason string) {
	if reason == "" {
		reason = http.StatusText(status)
	}
	writeBody(w, r, status, "text/plain", fmt.Sprintf("%d: %s", status, reason))
}

// writeBody sets an explicit Content-Length so HEAD answers carry the same
// headers as GET.
func writeBody(w http.ResponseWriter, r *http.Request, status int, contentType, body string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		io.WriteString(w, body) //nolint:errcheck // client may have gone
	}
}

// Link is the network the server plays between itself and its clients.
func (s *Server) Link() Link {
	s.linkMu.Lock()
	defer s.linkMu.Unlock()
	return s.link
}

// SetLink changes the link for connections accepted from now on.
func (s *Server) SetLink(l Link) {
	s.linkMu.Lock()
	s.link = l
	s.linkMu.Unlock()
}
