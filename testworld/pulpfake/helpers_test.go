package pulpfake_test

import (
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

// startServer starts a server on a free port and closes it with the test.
func startServer(t *testing.T, opts pulpfake.Options) *pulpfake.Server {
	t.Helper()
	s := pulpfake.New(opts)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// noRedirect lets tests see 301/302 answers themselves.
var noRedirect = &http.Client{
	Timeout:       5 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

type response struct {
	status int
	header http.Header
	body   string
}

// do sends a request; user/pass are used for basic auth when user != "".
func do(t *testing.T, method, url, user, pass string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func get(t *testing.T, url string) response {
	t.Helper()
	return do(t, http.MethodGet, url, "", "")
}

var linkRE = regexp.MustCompile(`<a href="([^"]*)">([^<]*)</a>`)

// links returns the (href, text) pairs of a listing in document order.
func links(body string) (hrefs, texts []string) {
	for _, m := range linkRE.FindAllStringSubmatch(body, -1) {
		hrefs = append(hrefs, m[1])
		texts = append(texts, m[2])
	}
	return hrefs, texts
}

// entries returns the link texts without "../".
func entries(body string) []string {
	_, texts := links(body)
	var out []string
	for _, s := range texts {
		if s != "../" {
			out = append(out, s)
		}
	}
	return out
}

func expectStatus(t *testing.T, what string, r response, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("%s: status %d, want %d; body %q", what, r.status, want, r.body)
	}
}

func expect404(t *testing.T, what string, r response) {
	t.Helper()
	expectStatus(t, what, r, http.StatusNotFound)
	if r.body != "404: Not Found" {
		t.Errorf("%s: body %q, want %q", what, r.body, "404: Not Found")
	}
	if ct := r.header.Get("Content-Type"); ct != "text/plain" {
		t.Errorf("%s: Content-Type %q, want text/plain", what, ct)
	}
}
