package cloud

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/httprec"
)

// Request is one call that changed something on the cloud (POST, PUT,
// PATCH, DELETE), as the cloud received and answered it: what a client
// did, for tests comparing two clients' effects (the behaviour suite runs
// the official builder and ours on the same templates).
type Request struct {
	Service string // SvcCompute, ...
	Method  string
	Path    string // without the query
	// User is the name of the user whose token the call carried; empty
	// for unauthenticated calls (token requests). Tests tell clients
	// apart by giving each its own user (AddUser).
	User   string
	Body   []byte // a JSON request body; nil for other content (image data)
	Status int
	Answer []byte // a JSON answer body
}

// journal keeps the Requests while recording is on.
type journal struct {
	mu   sync.Mutex
	on   bool
	reqs []Request
}

// maxJournalBody bounds a kept body: API bodies are small, image data is
// not JSON and never kept.
const maxJournalBody = 1 << 20

// RecordRequests starts (or stops) recording the calls that change
// something, clearing what was recorded.
func (c *Cloud) RecordRequests(on bool) {
	c.journal.mu.Lock()
	defer c.journal.mu.Unlock()
	c.journal.on, c.journal.reqs = on, nil
}

// Requests returns the calls recorded since RecordRequests(true), in the
// order they were answered.
func (c *Cloud) Requests() []Request {
	c.journal.mu.Lock()
	defer c.journal.mu.Unlock()
	return append([]Request(nil), c.journal.reqs...)
}

func (j *journal) recording() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.on
}

// serveJournaled serves r through next and records it when it is a
// change and recording is on.
func (c *Cloud) serveJournaled(svc string, w http.ResponseWriter, r *http.Request, next http.Handler) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || !c.journal.recording() {
		next.ServeHTTP(w, r)
		return
	}
	req := Request{Service: svc, Method: r.Method, Path: r.URL.Path}
	if t := c.identity.validToken(r.Header.Get("X-Auth-Token")); t != nil {
		req.User = t.user.Name
	}
	if isJSON(r.Header.Get("Content-Type")) && r.Body != nil {
		b, err := io.ReadAll(io.LimitReader(r.Body, maxJournalBody))
		if err == nil {
			req.Body = b
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
	}
	rec := &journalWriter{Recorder: httprec.Recorder{ResponseWriter: w}}
	next.ServeHTTP(rec, r)
	req.Status = rec.Status
	if isJSON(rec.Header().Get("Content-Type")) {
		req.Answer = rec.body.Bytes()
	}
	c.journal.mu.Lock()
	defer c.journal.mu.Unlock()
	if c.journal.on {
		c.journal.reqs = append(c.journal.reqs, req)
	}
}

func isJSON(contentType string) bool {
	return strings.Contains(contentType, "json")
}

// journalWriter keeps a copy of the answer's body.
type journalWriter struct {
	httprec.Recorder
	body bytes.Buffer
}

func (j *journalWriter) Write(p []byte) (int, error) {
	if j.body.Len()+len(p) <= maxJournalBody {
		j.body.Write(p)
	}
	return j.Recorder.Write(p)
}
