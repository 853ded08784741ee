package pulpfake

import (
	"bytes"
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/httprec"
)

// ObjectStore is a minimal stand-in for the object storage a Distribution's
// RedirectURL points at. It runs on its own port (a different "host" from
// the content app) and records whether clients sent credentials there.
type ObjectStore struct {
	ln  net.Listener
	srv *http.Server

	rejectAuth atomic.Bool

	mu       sync.Mutex
	files    map[string][]byte
	requests []ObjectRequest
}

// ObjectRequest is one request received by an ObjectStore. Only the
// presence of an Authorization header is kept, never its value.
type ObjectRequest struct {
	Method   string    `json:"method"`
	Path     string    `json:"path"`
	RawQuery string    `json:"raw_query,omitempty"`
	HasAuth  bool      `json:"has_auth"`
	Status   int       `json:"status"`
	Time     time.Time `json:"time"`
}

// NewObjectStore starts a store on 127.0.0.1 serving files, keyed by path
// without leading slash (e.g. "bucket/snap/repodata/repomd.xml"). It panics
// if it cannot listen, like httptest.NewServer.
func NewObjectStore(files map[string][]byte) *ObjectStore {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("pulpfake: object store listen: " + err.Error())
	}
	o := &ObjectStore{ln: ln, files: map[string][]byte{}}
	for k, v := range files {
		o.files[strings.TrimPrefix(k, "/")] = slices.Clone(v)
	}
	o.srv = &http.Server{
		Handler:           http.HandlerFunc(o.serve),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go o.srv.Serve(ln) //nolint:errcheck // returns ErrServerClosed on Close
	return o
}

// URL returns "http://127.0.0.1:PORT".
func (o *ObjectStore) URL() string { return "http://" + o.ln.Addr().String() }

// Put adds or replaces a file.
func (o *ObjectStore) Put(key string, data []byte) {
	o.mu.Lock()
	o.files[strings.TrimPrefix(key, "/")] = slices.Clone(data)
	o.mu.Unlock()
}

// SetRejectAuthorization makes the store answer 400 to requests carrying an
// Authorization header, as S3 does for presigned URLs plus credentials.
func (o *ObjectStore) SetRejectAuthorization(reject bool) { o.rejectAuth.Store(reject) }

// Requests returns a copy of the requests received so far.
func (o *ObjectStore) Requests() []ObjectRequest {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.requests)
}

// Close stops the store.
func (o *ObjectStore) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := o.srv.Shutdown(ctx); err != nil {
		o.srv.Close()
	}
}

func (o *ObjectStore) serve(w http.ResponseWriter, r *http.Request) {
	rec := &httprec.Recorder{ResponseWriter: w}
	req := ObjectRequest{
		Method:   r.Method,
		Path:     r.URL.Path,
		RawQuery: r.URL.RawQuery,
		HasAuth:  r.Header.Get("Authorization") != "",
		Time:     time.Now(),
	}
	defer func() {
		req.Status = rec.Status
		o.mu.Lock()
		o.requests = append(o.requests, req)
		o.mu.Unlock()
	}()

	if req.HasAuth && o.rejectAuth.Load() {
		writeBody(rec, r, http.StatusBadRequest, "application/xml",
			"<Error><Code>InvalidArgument</Code><Message>Only one auth mechanism allowed</Message></Error>")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeBody(rec, r, http.StatusMethodNotAllowed, "text/plain", "method not allowed")
		return
	}
	o.mu.Lock()
	data, ok := o.files[strings.TrimPrefix(r.URL.Path, "/")]
	o.mu.Unlock()
	if !ok {
		writeBody(rec, r, http.StatusNotFound, "application/xml",
			"<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>")
		return
	}
	rec.Header().Set("Content-Type", contentType(r.URL.Path))
	http.ServeContent(rec, r, "", time.Time{}, bytes.NewReader(data))
}
