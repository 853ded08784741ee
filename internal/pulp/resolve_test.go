package pulp

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

const (
	user   = "ark-user"
	secret = "s3cr3t-ark-password"
	path   = "rocky/9.6/BaseOS/x86_64/os"
)

var guard = &pulpfake.Guard{Users: map[string]string{user: secret}}

// world starts a fake content app holding three guarded snapshots of path.
func world(t *testing.T, format pulpfake.Format) *pulpfake.Server {
	t.Helper()
	return pulpfake.StartT(t, pulpfake.Options{Format: format}, guard, []string{path}, "20250102T030405", "20250601T120000", "20251106T211545")
}

func client(t *testing.T, password string) *Client {
	t.Helper()
	return clientTimeout(t, password, 2*time.Second)
}

// clientTimeout is client with another bound on each request: reading a
// listing of megabytes under the race detector on a loaded machine takes
// longer than 2 s.
func clientTimeout(t *testing.T, password string, timeout time.Duration) *Client {
	t.Helper()
	c, err := NewClient(ClientOptions{Username: user, Password: password, Timeout: timeout, Attempts: 3,
		Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func resolve(t *testing.T, s *pulpfake.Server, q Query) (Result, error) {
	t.Helper()
	q.ContentURL, q.Path = s.ContentURL(), path
	return client(t, secret).Resolve(context.Background(), q)
}

func TestResolveModesAllFormats(t *testing.T) {
	for _, f := range []pulpfake.Format{pulpfake.Format3115, pulpfake.Format322, pulpfake.FormatLegacy} {
		s := world(t, f)
		cut, _ := ParseCutoff("2025-10-01T00:00:00Z")
		for _, tc := range []struct {
			q    Query
			want string
		}{
			{Query{Mode: ModeLatest, Verify: true}, "20251106T211545"},
			{Query{Mode: ModeLatest}, "20251106T211545"},
			{Query{Mode: ModeNotAfter, NotAfter: cut, Verify: true}, "20250601T120000"},
			{Query{Mode: ModeNotAfter, NotAfter: mustTS("20250601T120000")}, "20250601T120000"},
			{Query{Mode: ModePinned, Pinned: "20250102T030405", Verify: true}, "20250102T030405"},
			{Query{Mode: ModePinned, Pinned: "20250102T030405"}, "20250102T030405"},
		} {
			res, err := resolve(t, s, tc.q)
			if err != nil {
				t.Fatalf("format %v, %+v: %v", f, tc.q, err)
			}
			if res.Timestamp != tc.want || len(res.Warnings) != 0 {
				t.Fatalf("format %v, %+v: got %+v, want %s", f, tc.q, res, tc.want)
			}
		}
	}
}

func mustTS(s string) time.Time {
	t, err := ParseTimestamp(s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestResolveErrorsNameURLAndStatus(t *testing.T) {
	s := world(t, pulpfake.Format3115)
	base := s.ContentURL() + "/" + path + "/"
	for _, tc := range []struct {
		name string
		q    Query
		want string
	}{
		{"cut-off before every snapshot", Query{Mode: ModeNotAfter, NotAfter: mustTS("20240101T000000")},
			"GET " + base + ": no snapshot at or before 20240101T000000 (oldest is 20250102T030405)"},
		{"pinned snapshot missing, verified", Query{Mode: ModePinned, Pinned: "20250303T000000", Verify: true},
			"pinned snapshot 20250303T000000: GET " + base + "20250303T000000/repodata/repomd.xml: 404 Not Found"},
		{"pinned snapshot missing, listed", Query{Mode: ModePinned, Pinned: "20250303T000000"},
			"GET " + base + ": pinned snapshot 20250303T000000 is not listed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resolve(t, s, tc.q)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
		})
	}

	c := client(t, secret)
	_, err := c.Resolve(context.Background(), Query{ContentURL: s.ContentURL(), Path: "rocky/9.9/BaseOS/x86_64/os", Mode: ModeLatest})
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 404 || err.Error() != "GET "+s.ContentURL()+"/rocky/9.9/BaseOS/x86_64/os/: 404 Not Found" {
		t.Fatalf("unknown path: got %v", err)
	}
}

func TestResolveEmptyListing(t *testing.T) {
	s := pulpfake.StartT(t, pulpfake.Options{}, nil, []string{path}, "development")
	s.AddDistribution(pulpfake.Distribution{BasePath: path + "/20250102T030405", Hidden: true})
	_, err := client(t, secret).Resolve(context.Background(), Query{ContentURL: s.ContentURL(), Path: path, Mode: ModeLatest, Verify: true})
	if err == nil || !strings.HasSuffix(err.Error(), ": no snapshots listed") {
		t.Fatalf("got %v", err)
	}
	// A hidden snapshot can still be pinned when verified, since its content is served.
	res, err := client(t, secret).Resolve(context.Background(), Query{ContentURL: s.ContentURL(), Path: path, Mode: ModePinned, Pinned: "20250102T030405", Verify: true})
	if err != nil || res.Timestamp != "20250102T030405" {
		t.Fatalf("pinned hidden snapshot: %+v, %v", res, err)
	}
}

func TestVerifyPassesOverForbiddenAndUnpublished(t *testing.T) {
	s := world(t, pulpfake.Format3115)
	// The newest is for another audience, the next lost its publication.
	s.AddDistribution(pulpfake.Distribution{BasePath: path + "/20260101T000000", Guard: &pulpfake.Guard{Users: map[string]string{"dev": "x"}}})
	s.AddDistribution(pulpfake.Distribution{BasePath: path + "/20251201T000000", NoPublication: true})

	res, err := resolve(t, s, Query{Mode: ModeLatest, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Timestamp != "20251106T211545" {
		t.Fatalf("chose %s", res.Timestamp)
	}
	if len(res.Warnings) != 2 || !strings.Contains(res.Warnings[0], "20260101T000000") || !strings.Contains(res.Warnings[0], "403 Forbidden") ||
		!strings.Contains(res.Warnings[1], "20251201T000000") || !strings.Contains(res.Warnings[1], "404 Not Found") {
		t.Fatalf("warnings: %q", res.Warnings)
	}
	// Without verification the newest listed entry wins, unchecked.
	if res, _ := resolve(t, s, Query{Mode: ModeLatest}); res.Timestamp != "20260101T000000" {
		t.Fatalf("unverified chose %s", res.Timestamp)
	}
	// With the wrong password nothing is usable, and the error says why
	// without giving the password away.
	c := client(t, "wrong-password")
	_, err = c.Resolve(context.Background(), Query{ContentURL: s.ContentURL(), Path: path, Mode: ModeLatest, Verify: true})
	if err == nil || !strings.Contains(err.Error(), "no usable snapshot (20260101T000000 answered 403 Forbidden, 20251201T000000 answered 404 Not Found, 20251106T211545 answered 403 Forbidden") {
		t.Fatalf("got %v", err)
	}
	if !strings.HasSuffix(err.Error(), "; the server refused these credentials: check username and password (or ARK_USERNAME and ARK_PASSWORD)") {
		t.Fatalf("the error does not point at the credentials: %v", err)
	}
	if strings.Contains(err.Error(), "wrong-password") {
		t.Fatal("password in error")
	}
}

func TestCredentialsSentPreemptivelyButNeverOffHost(t *testing.T) {
	store := pulpfake.NewObjectStore(map[string][]byte{
		"bucket/20251106T211545/repodata/repomd.xml": []byte("<repomd/>"),
	})
	defer store.Close()
	s := world(t, pulpfake.Format3115)
	s.RemoveDistribution(path + "/20251106T211545")
	s.AddDistribution(pulpfake.Distribution{BasePath: path + "/20251106T211545", Guard: guard,
		RedirectURL: store.URL() + "/bucket/20251106T211545"})

	res, err := resolve(t, s, Query{Mode: ModeLatest, Verify: true})
	if err != nil || res.Timestamp != "20251106T211545" {
		t.Fatalf("%+v %v", res, err)
	}
	// The content app saw the credentials on every request (no challenge
	// round trip); the object store on another port saw none.
	for _, r := range s.Requests() {
		if !r.HasAuth || r.Username != user {
			t.Fatalf("request without credentials: %+v", r)
		}
	}
	got := store.Requests()
	if len(got) != 1 || got[0].HasAuth || got[0].Status != 200 {
		t.Fatalf("object store requests: %+v", got)
	}
}

func TestTransientFaultsAreRetried(t *testing.T) {
	s := world(t, pulpfake.Format3115)
	s.SetFaults(
		pulpfake.Fault{PathPrefix: path + "/", Method: "GET", Status: 503, Times: 2},
		pulpfake.Fault{PathPrefix: path + "/20251106T211545/", Status: 429, RetryAfter: "0", Times: 1},
	)
	res, err := resolve(t, s, Query{Mode: ModeLatest, Verify: true})
	if err != nil || res.Timestamp != "20251106T211545" {
		t.Fatalf("%+v %v", res, err)
	}
	var statuses []int
	for _, r := range s.Requests() {
		statuses = append(statuses, r.Status)
	}
	if len(statuses) != 5 {
		t.Fatalf("want 2x503, listing, 429, repomd; got %v", statuses)
	}

	// A permanent 500 gives up after the configured attempts with the status.
	s.SetFaults(pulpfake.Fault{Status: 500})
	_, err = resolve(t, s, Query{Mode: ModeLatest})
	if err == nil || !strings.HasSuffix(err.Error(), ": 500 Internal Server Error") {
		t.Fatalf("got %v", err)
	}
}

func TestHangingServerTimesOutAndRetries(t *testing.T) {
	s := world(t, pulpfake.Format3115)
	s.SetFaults(pulpfake.Fault{PathPrefix: path + "/", Hang: true, Times: 1})
	c, _ := NewClient(ClientOptions{Username: user, Password: secret, Timeout: 200 * time.Millisecond, Attempts: 3, Logf: func(string, ...any) {}})
	res, err := c.Resolve(context.Background(), Query{ContentURL: s.ContentURL(), Path: path, Mode: ModeLatest, Verify: true})
	if err != nil || res.Timestamp != "20251106T211545" {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestRedirectToTrailingSlashKeepsCredentials(t *testing.T) {
	s := world(t, pulpfake.Format3115)
	c := client(t, secret)
	// Without the slash the content app answers 301; the listing still parses.
	var names []string
	err := c.get(context.Background(), s.ContentURL()+"/"+path, func(r io.Reader) error {
		var err error
		names, err = ParseListing(r)
		return err
	})
	if err != nil || len(names) != 3 {
		t.Fatalf("%v %q", err, names)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Status != 301 || reqs[1].Status != 200 || reqs[1].Username != user {
		t.Fatalf("requests %+v", reqs)
	}
}
