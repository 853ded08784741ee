package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/httpretry"
)

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// newFetcher fetches into a fresh cache with quick retries, its progress
// lines collected.
func newFetcher(t *testing.T, o Options) (*Fetcher, *[]string) {
	t.Helper()
	var mu sync.Mutex
	lines := &[]string{}
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	o.Retry = httpretry.Transport{Initial: time.Millisecond, Max: 5 * time.Millisecond}
	o.Progress = func(l string) {
		mu.Lock()
		defer mu.Unlock()
		*lines = append(*lines, l)
	}
	return New(o), lines
}

// entries lists the cache, temporary files included.
func entries(t *testing.T, f *Fetcher) []string {
	t.Helper()
	es, err := os.ReadDir(f.opts.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

var data = []byte(strings.Repeat("fatimage ", 1000))

func TestFlaky503ThenOK(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hits.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write(data)
	}))
	defer srv.Close()
	f, lines := newFetcher(t, Options{})
	r, err := f.Get(context.Background(), Item{What: "downloads[0]", URL: srv.URL + "/a.tgz", SHA256: strings.ToUpper(sum(data))})
	if err != nil || hits.Load() != 2 || r.Cached || r.Path != filepath.Join(f.opts.Dir, sum(data)) {
		t.Fatalf("%+v %v after %d requests", r, err, hits.Load())
	}
	if got, _ := os.ReadFile(r.Path); string(got) != string(data) {
		t.Error("cached content differs")
	}
	if len(*lines) == 0 || (*lines)[0] != "downloading "+srv.URL+"/a.tgz" {
		t.Errorf("progress %q", *lines)
	}
	// a lasting 503 fails naming the item and the status
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) })
	_, err = f.Get(context.Background(), Item{What: "downloads[1]", URL: srv.URL + "/b", SHA256: strings.Repeat("1", 64)})
	var se *StatusError
	if !errors.As(err, &se) || err.Error() != "downloads[1]: GET "+srv.URL+"/b: 503 Service Unavailable" {
		t.Errorf("lasting 503: %v", err)
	}
}

// A body cut short is downloaded again; one always cut short fails and
// leaves nothing in the cache.
func TestTruncatedBody(t *testing.T) {
	var hits atomic.Int32
	good := 2
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		if int(hits.Add(1)) < good {
			w.Write(data[:len(data)/2]) // the server closes the connection short of the length
			return
		}
		w.Write(data)
	}))
	defer srv.Close()
	f, lines := newFetcher(t, Options{})
	r, err := f.Get(context.Background(), Item{What: "x", URL: srv.URL, SHA256: sum(data)})
	if err != nil || hits.Load() != 2 || r.SHA256 != sum(data) {
		t.Fatalf("%+v %v after %d requests", r, err, hits.Load())
	}
	if !strings.Contains(strings.Join(*lines, "\n"), "unexpected EOF; downloading again (attempt 2 of 3)") {
		t.Errorf("progress %q", *lines)
	}
	hits.Store(0)
	good = 100
	f, _ = newFetcher(t, Options{})
	_, err = f.Get(context.Background(), Item{What: "x", URL: srv.URL, SHA256: sum(data)})
	if err == nil || !strings.Contains(err.Error(), "x: reading "+srv.URL+": unexpected EOF") || hits.Load() != DefaultAttempts {
		t.Errorf("always cut short: %v after %d requests", err, hits.Load())
	}
	if e := entries(t, f); len(e) != 0 {
		t.Errorf("cache holds %q", e)
	}
}

func TestSHA256Mismatch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(data) }))
	defer srv.Close()
	f, _ := newFetcher(t, Options{})
	want := strings.Repeat("0", 64)
	_, err := f.Get(context.Background(), Item{What: "binaries: a 1", URL: srv.URL + "/a", SHA256: want})
	var me *MismatchError
	if !errors.As(err, &me) || err.Error() != "binaries: a 1: sha256 mismatch: want "+want+", got "+sum(data)+" ("+srv.URL+"/a)" {
		t.Errorf("mismatch: %v", err)
	}
	if e := entries(t, f); len(e) != 0 {
		t.Errorf("cache holds %q", e)
	}
	// without a sha256 the file is kept under the one it has
	r, err := f.Get(context.Background(), Item{What: "unchecked", URL: srv.URL + "/a"})
	if err != nil || r.SHA256 != sum(data) || filepath.Base(r.Path) != sum(data) {
		t.Errorf("unchecked: %+v %v", r, err)
	}
}

func TestCachedHitMakesNoRequest(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Write(data)
	}))
	f, lines := newFetcher(t, Options{})
	it := Item{What: "x", URL: srv.URL, SHA256: sum(data)}
	if _, err := f.Get(context.Background(), it); err != nil {
		t.Fatal(err)
	}
	srv.Close() // a request now would fail
	n := len(*lines)
	r, err := f.Get(context.Background(), it)
	if err != nil || !r.Cached || hits.Load() != 1 || len(*lines) != n {
		t.Errorf("%+v %v, %d requests, progress %q", r, err, hits.Load(), *lines)
	}
}

// Cancelling the context ends a download at once, leaving nothing.
func TestCancel(t *testing.T) {
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000")
		w.Write(data[:100])
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
	}))
	defer srv.Close()
	f, _ := newFetcher(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	begin := time.Now()
	_, err := f.Get(ctx, Item{What: "x", URL: srv.URL, SHA256: sum(data)})
	if !errors.Is(err, context.Canceled) || time.Since(begin) > 10*time.Second {
		t.Errorf("cancelled: %v after %s", err, time.Since(begin))
	}
	if e := entries(t, f); len(e) != 0 {
		t.Errorf("cache holds %q", e)
	}
}

func TestSizeBounds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked" {
			w.Write(data[:10])
			w.(http.Flusher).Flush() // no Content-Length
		} else {
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		}
		w.Write(data)
	}))
	defer srv.Close()
	f, _ := newFetcher(t, Options{MaxSize: 100})
	for _, tc := range []struct{ path, want string }{
		{"/a", "x: " + srv.URL + "/a is 9000 bytes, more than 100"},
		{"/chunked", "x: " + srv.URL + "/chunked is larger than 100 bytes"},
	} {
		if _, err := f.Get(context.Background(), Item{What: "x", URL: srv.URL + tc.path}); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v", tc.path, err)
		}
	}
	f, _ = newFetcher(t, Options{})
	if _, err := f.Get(context.Background(), Item{What: "x", URL: srv.URL + "/chunked", Size: int64(len(data)) + 20}); err == nil || err.Error() != "x: "+srv.URL+"/chunked has 9010 bytes, want 9020" {
		t.Errorf("declared size: %v", err)
	}
	if e := entries(t, f); len(e) != 0 {
		t.Errorf("cache holds %q", e)
	}
}

// A slow download says how far it got, at most once an interval.
func TestProgressLines(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		for i := 0; i < 9; i++ {
			w.Write(data[i*1000 : (i+1)*1000])
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
	}))
	defer srv.Close()
	f, lines := newFetcher(t, Options{Interval: 50 * time.Millisecond})
	begin := time.Now()
	if _, err := f.Get(context.Background(), Item{What: "downloads[0]", URL: srv.URL, SHA256: sum(data)}); err != nil {
		t.Fatal(err)
	}
	var progress []string
	for _, l := range *lines {
		if strings.HasPrefix(l, "downloads[0]: ") && strings.HasSuffix(l, "%)") && strings.Contains(l, " MiB of 0.0 MiB (") {
			progress = append(progress, l)
		}
	}
	if max := int(time.Since(begin)/(50*time.Millisecond)) + 1; len(progress) == 0 || len(progress) > max {
		t.Errorf("%d progress lines (at most %d): %q", len(progress), max, *lines)
	}
}

// Credentials (a registry's Basic password or token) go with a redirect
// to the same origin only: not to a subdomain, another port or from
// https to http.
func TestCredentialsStayWithTheirOrigin(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{} // "scheme host path" -> Authorization
	handler := func(scheme string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[scheme+" "+r.Host+" "+r.URL.Path] = r.Header.Get("Authorization")
			mu.Unlock()
			if to := r.URL.Query().Get("to"); to != "" {
				http.Redirect(w, r, to, http.StatusFound)
				return
			}
			w.Write(data)
		}
	}
	tlsSrv := httptest.NewTLSServer(handler("https"))
	defer tlsSrv.Close()
	plain := httptest.NewServer(handler("http"))
	defer plain.Close()
	// every name is this machine: :443 and :8443 the TLS server, :80 the plain one
	tr := tlsSrv.Client().Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		to := tlsSrv.Listener.Addr().String()
		if strings.HasSuffix(addr, ":80") {
			to = plain.Listener.Addr().String()
		}
		return (&net.Dialer{}).DialContext(ctx, network, to)
	}
	tr.TLSClientConfig.InsecureSkipVerify = true // the test's own server under other names
	f, _ := newFetcher(t, Options{Base: tr})
	for _, tc := range []struct {
		to, at string
		keeps  bool
	}{
		{"https://example.com/same", "https example.com /same", true},
		{"https://cdn.example.com/sub", "https cdn.example.com /sub", false},
		{"https://example.com:8443/port", "https example.com:8443 /port", false},
		{"http://example.com/down", "http example.com /down", false},
	} {
		h := http.Header{"Authorization": {"Basic c2VjcmV0"}}
		if _, err := f.Get(context.Background(), Item{What: "x", URL: "https://example.com/start?to=" + tc.to, Header: h}); err != nil {
			t.Fatal(tc.to, err)
		}
		mu.Lock()
		start, got := seen["https example.com /start"], seen[tc.at]
		mu.Unlock()
		if start != "Basic c2VjcmV0" || (got != "") != tc.keeps {
			t.Errorf("redirect to %s: first request had %q, the redirected one %q", tc.to, start, got)
		}
	}
}

// A credential goes to a URL a server named (a token realm) over https,
// or to that server's own origin; never to another plain-http origin nor
// down from https.
func TestMaySendCredentials(t *testing.T) {
	for _, tc := range []struct {
		target, home string
		may          bool
	}{
		{"https://auth.example.com/token", "https://registry.example.com", true},
		{"https://registry.example.com/token", "http://registry.example.com", true},
		{"http://registry.example.com:80/token", "http://registry.example.com", true},
		{"http://auth.example.com/token", "http://registry.example.com", false},
		{"http://registry.example.com:5001/token", "http://registry.example.com:5000", false},
		{"http://registry.example.com/token", "https://registry.example.com", false},
	} {
		target, _ := url.Parse(tc.target)
		home, _ := url.Parse(tc.home)
		if got := MaySendCredentials(target, home); got != tc.may {
			t.Errorf("%s named by %s: %v, want %v", tc.target, tc.home, got, tc.may)
		}
	}
}
