// Package sitepulp is a test double of a site's own Pulp (pulpcore 3 with
// pulp_rpm) as the fatimage-ark data source's `site_pulp` drives it: the
// REST API for RPM remotes, repositories and their sync, publications,
// distributions and tasks (JSON shapes, pulp_hrefs, limit/offset
// pagination with absolute next links, 201/202 answers, task states,
// DRF-style validation errors), and a content app that serves what the
// distributions publish.
//
// A sync really downloads the upstream snapshot (repomd.xml and every
// metadata file it lists; with policy immediate every package of
// primary.xml, with on_demand each package when first asked for) with the
// remote's credentials, so the content app then serves a real repository
// that dnf can install from. Differences from the real Pulp are listed in
// docs/lab.md.
package sitepulp

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/faultinject"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

// APIPrefix is where pulpcore mounts its REST API.
const APIPrefix = "/pulp/api/v3/"

// Options configures a Server.
type Options struct {
	// Addr is the listen address; default "127.0.0.1:0".
	Addr string
	// Username and Password are the API's only user (HTTP Basic).
	Username, Password string
	// ContentGuard, when set, guards every distribution's content.
	ContentGuard *pulpfake.Guard
	// Dir holds synced content; default a temporary directory removed by
	// Close.
	Dir string
	// Logf receives one line per task; nil discards.
	Logf func(format string, args ...any)
}

// Fault is an injected failure of API requests (testworld/faultinject):
// PathPrefix and Path match the path below /pulp/api/v3/.
type Fault = faultinject.Rule

// Server is the site Pulp double. All methods are safe for concurrent use.
type Server struct {
	opts    Options
	content *pulpfake.Server
	dir     string
	tmpDir  bool

	mu        sync.Mutex
	remotes   map[string]*Remote // by href
	repos     map[string]*Repository
	versions  map[string]*version
	pubs      map[string]*Publication
	dists     map[string]*Distribution
	tasks     map[string]*Task
	taskOrder []string
	faults    *faultinject.Injector
	api       http.Handler // serveAPI behind the faults
	hangTasks bool
	stopping  chan struct{}

	ln   net.Listener
	srv  *http.Server
	once sync.Once
	wg   sync.WaitGroup // running tasks
}

// New returns a server that is not yet listening.
func New(o Options) (*Server, error) {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	s := &Server{
		opts:    o,
		content: pulpfake.New(pulpfake.Options{}),
		dir:     o.Dir,
		remotes: map[string]*Remote{}, repos: map[string]*Repository{}, versions: map[string]*version{},
		pubs: map[string]*Publication{}, dists: map[string]*Distribution{}, tasks: map[string]*Task{},
		stopping: make(chan struct{}),
	}
	s.faults = s.newFaults()
	s.api = s.faults.Wrap("", APIPrefix, http.HandlerFunc(s.serveAPI))
	if s.dir == "" {
		d, err := os.MkdirTemp("", "sitepulp-")
		if err != nil {
			return nil, err
		}
		s.dir, s.tmpDir = d, true
	} else {
		// Objects live in memory only, so content a previous run left
		// behind belongs to nothing.
		if err := os.RemoveAll(s.dir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(s.dir, 0o755); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Start listens and serves in the background.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("sitepulp: listen: %w", err)
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go s.srv.Serve(ln) //nolint:errcheck // ErrServerClosed on Close
	return nil
}

// URL is the API base, "http://host:port", as site_pulp.url takes it.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// ContentURL is URL() + "/pulp/content".
func (s *Server) ContentURL() string { return s.URL() + "/pulp/content" }

// Content is the content app, for its request log and faults.
func (s *Server) Content() *pulpfake.Server { return s.content }

// Close stops serving, ends running tasks and removes a temporary Dir.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		close(s.stopping)
		if s.srv != nil {
			err = s.srv.Close()
		}
		s.wg.Wait()
		s.content.Close()
		if s.tmpDir {
			err = errors.Join(err, os.RemoveAll(s.dir))
		}
	})
	return err
}

// ServeHTTP routes the API, the double's own control endpoints and the
// content app.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, APIPrefix):
		s.api.ServeHTTP(w, r)
	case strings.HasPrefix(r.URL.Path, controlPrefix):
		s.serveControl(w, r)
	default:
		s.fetchOnDemand(r.URL.Path)
		s.content.ServeHTTP(w, r)
	}
}

// authorized checks the API user like DRF's BasicAuthentication.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="api"`)
		writeJSON(w, http.StatusUnauthorized, detail("Authentication credentials were not provided."))
		return false
	}
	if user != s.opts.Username || subtle.ConstantTimeCompare([]byte(pass), []byte(s.opts.Password)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="api"`)
		writeJSON(w, http.StatusUnauthorized, detail("Invalid username/password."))
		return false
	}
	return true
}

func detail(msg string) map[string]string { return map[string]string{"detail": msg} }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// newID is a random UUID (version 4) as pulpcore uses for primary keys.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000000Z") }

// SetFaults replaces the API fault list; an invalid fault panics (see
// pulpfake.Server.SetFaults).
func (s *Server) SetFaults(faults ...Fault) {
	if err := s.faults.Set(faults...); err != nil {
		panic(err)
	}
}

// newFaults answers injected statuses as DRF does.
func (s *Server) newFaults() *faultinject.Injector {
	return faultinject.New(faultinject.Options{
		Answer: func(w http.ResponseWriter, _ *http.Request, _ string, status int, msg string) {
			if msg == "" {
				msg = http.StatusText(status)
			}
			writeJSON(w, status, detail(msg))
		},
		Done: s.stopping,
	})
}

// SetHangTasks makes new tasks stay "running" until cancelled (true), as
// a stuck worker would, or run normally (false).
func (s *Server) SetHangTasks(hang bool) {
	s.mu.Lock()
	s.hangTasks = hang
	s.mu.Unlock()
}

// Stats counts the objects and tasks the server holds.
type Stats struct {
	Tasks         int `json:"tasks"`
	Remotes       int `json:"remotes"`
	Repositories  int `json:"repositories"`
	Publications  int `json:"publications"`
	Distributions int `json:"distributions"`
}

// Stats returns the current counts.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Tasks: len(s.tasks), Remotes: len(s.remotes), Repositories: len(s.repos), Publications: len(s.pubs), Distributions: len(s.dists)}
}

// Tasks returns copies of every task, oldest first.
func (s *Server) Tasks() []Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Task, 0, len(s.taskOrder))
	for _, h := range s.taskOrder {
		out = append(out, *s.tasks[h])
	}
	return out
}

// SettledTasks returns the tasks once none is "canceling" any more, or
// as they are when wait has passed. A cancel PATCH answers "canceling" and
// the worker ends the task on its own time, as Pulp's does.
func (s *Server) SettledTasks(wait time.Duration) []Task {
	for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
		tasks := s.Tasks()
		if !slices.ContainsFunc(tasks, func(t Task) bool { return t.State == "canceling" }) || time.Now().After(deadline) {
			return tasks
		}
	}
}

// DeleteDistribution removes the distribution named name (and stops
// serving its base path), as `pulp rpm distribution destroy` would; it
// reports whether one existed. Tests use it to leave a set-up half made.
func (s *Server) DeleteDistribution(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for h, d := range s.dists {
		if d.Name == name {
			delete(s.dists, h)
			s.content.RemoveDistribution(d.BasePath)
			return true
		}
	}
	return false
}

// controlPrefix is the double's own control API, outside Pulp's.
const controlPrefix = "/_control/site/"

// serveControl offers the Go methods above to other processes:
//
//	GET  /_control/site/stats
//	PUT  /_control/site/faults     [{"path_prefix": "tasks/", "status": 503, "times": 2}]
//	PUT  /_control/site/hang_tasks {"hang": true}
//	DELETE /_control/site/distributions/<name>
func (s *Server) serveControl(w http.ResponseWriter, r *http.Request) {
	what := strings.TrimPrefix(r.URL.Path, controlPrefix)
	switch {
	case what == "stats" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.Stats())
	case what == "faults" && r.Method == http.MethodPut:
		var faults []Fault
		if err := json.NewDecoder(r.Body).Decode(&faults); err != nil {
			writeJSON(w, http.StatusBadRequest, detail(err.Error()))
			return
		}
		if err := s.faults.Set(faults...); err != nil {
			writeJSON(w, http.StatusBadRequest, detail(err.Error()))
			return
		}
		writeJSON(w, http.StatusOK, faults)
	case what == "hang_tasks" && r.Method == http.MethodPut:
		var body struct {
			Hang *bool `json:"hang"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Hang == nil {
			writeJSON(w, http.StatusBadRequest, detail(`want {"hang": true|false}`))
			return
		}
		s.SetHangTasks(*body.Hang)
		writeJSON(w, http.StatusOK, body)
	case strings.HasPrefix(what, "distributions/") && r.Method == http.MethodDelete:
		if !s.DeleteDistribution(strings.TrimPrefix(what, "distributions/")) {
			writeJSON(w, http.StatusNotFound, detail("Not found."))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, http.StatusNotFound, detail("Not found."))
	}
}
