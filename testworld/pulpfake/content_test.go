package pulpfake_test

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

const baseOS = "rocky/9.6/BaseOS/x86_64/os"

func TestRedirectMissingSlash(t *testing.T) {
	s := startServer(t, pulpfake.Options{})
	s.AddSnapshots(baseOS, "20250102T030405")
	for _, tc := range []struct{ path, want string }{
		{"/pulp/content", "/pulp/content/"},
		{"/pulp/content/rocky", "/pulp/content/rocky/"},
		{"/pulp/content/rocky/9.6?x=1&y=2", "/pulp/content/rocky/9.6/?x=1&y=2"},
		{"/pulp/content/" + baseOS, "/pulp/content/" + baseOS + "/"},
		{"/pulp/content/" + baseOS + "/20250102T030405", "/pulp/content/" + baseOS + "/20250102T030405/"},
		{"/pulp/content/" + baseOS + "/20250102T030405/repodata", "/pulp/content/" + baseOS + "/20250102T030405/repodata/"},
	} {
		r := get(t, s.URL()+tc.path)
		expectStatus(t, tc.path, r, http.StatusMovedPermanently)
		if loc := r.header.Get("Location"); loc != tc.want {
			t.Errorf("%s: Location %q, want %q", tc.path, loc, tc.want)
		}
	}
}

func TestNotFound(t *testing.T) {
	s := startServer(t, pulpfake.Options{})
	s.AddSnapshots(baseOS, "20250102T030405")
	for _, p := range []string{
		"/pulp/content/nope/",
		"/pulp/content/nope",
		"/pulp/content/rocky/9.7/",
		"/pulp/content/rocky/9.6/BaseOS/x86_64/os/20990101T000000/",
		"/pulp/content/" + baseOS + "/20250102T030405/Packages/",
		"/pulp/content/" + baseOS + "/20250102T030405/repodata/primary.xml.gz",
		"/pulp/content/" + baseOS + "/20250102T030405/repodata/repomd.xml/",
		"/",
		"/pulp/",
		"/pulp/api/v3/",
		"/pulp/contentx/",
	} {
		expect404(t, p, get(t, s.URL()+p))
	}
	r := do(t, http.MethodPost, s.ContentURL()+"/", "", "")
	expectStatus(t, "POST", r, http.StatusMethodNotAllowed)
}

func TestGuard(t *testing.T) {
	s := startServer(t, pulpfake.Options{})
	guard := &pulpfake.Guard{Users: map[string]string{"alice": "s3cret"}}
	s.AddDistribution(pulpfake.Distribution{BasePath: baseOS + "/20250102T030405", Guard: guard})
	s.AddDistribution(pulpfake.Distribution{BasePath: baseOS + "/20250601T120000",
		Guard: &pulpfake.Guard{Users: map[string]string{"bob": "pw"}, Reason: "Not allowed for you."}})
	guard.Users["mallory"] = "x" // must not leak into the server's copy

	// Listings above distributions are not access-controlled.
	r := get(t, s.ContentURL()+"/"+baseOS+"/")
	expectStatus(t, "listing", r, http.StatusOK)
	if got := entries(r.body); len(got) != 2 {
		t.Errorf("listing %q", got)
	}

	url := s.ContentURL() + "/" + baseOS + "/20250102T030405/repodata/repomd.xml"
	for _, tc := range []struct{ user, pass string }{{"", ""}, {"alice", "wrong"}, {"bob", "s3cret"}, {"mallory", "x"}} {
		r := do(t, http.MethodGet, url, tc.user, tc.pass)
		expectStatus(t, "creds "+tc.user+":"+tc.pass, r, http.StatusForbidden)
		if r.body != "403: Access denied." || r.header.Get("Content-Type") != "text/plain" {
			t.Errorf("403 body %q type %q", r.body, r.header.Get("Content-Type"))
		}
		if r.header.Get("WWW-Authenticate") != "" {
			t.Error("403 carries WWW-Authenticate")
		}
	}
	// The guard also applies to the distribution root and its redirect.
	expectStatus(t, "root", get(t, s.ContentURL()+"/"+baseOS+"/20250102T030405/"), http.StatusForbidden)
	expectStatus(t, "root no slash", get(t, s.ContentURL()+"/"+baseOS+"/20250102T030405"), http.StatusForbidden)

	r = do(t, http.MethodGet, url, "alice", "s3cret")
	expectStatus(t, "right creds", r, http.StatusOK)
	r = do(t, http.MethodGet, s.ContentURL()+"/"+baseOS+"/20250102T030405/", "alice", "s3cret")
	expectStatus(t, "right creds listing", r, http.StatusOK)

	r = get(t, s.ContentURL()+"/"+baseOS+"/20250601T120000/")
	if r.status != http.StatusForbidden || r.body != "403: Not allowed for you." {
		t.Errorf("custom reason: %d %q", r.status, r.body)
	}
}

func TestNoPublication(t *testing.T) {
	s := startServer(t, pulpfake.Options{})
	s.AddSnapshots(baseOS, "20250102T030405")
	s.AddDistribution(pulpfake.Distribution{BasePath: baseOS + "/20250601T120000", NoPublication: true})

	r := get(t, s.ContentURL()+"/"+baseOS+"/")
	if got, want := entries(r.body), []string{"20250102T030405/", "20250601T120000/"}; !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	for _, p := range []string{"/", "/repodata/", "/repodata/repomd.xml"} {
		expect404(t, p, get(t, s.ContentURL()+"/"+baseOS+"/20250601T120000"+p))
	}
}

func TestHead(t *testing.T) {
	s := startServer(t, pulpfake.Options{})
	s.AddSnapshots(baseOS, "20250102T030405")
	s.AddDistribution(pulpfake.Distribution{BasePath: "guarded/1",
		Guard: &pulpfake.Guard{Users: map[string]string{"u": "p"}}})
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/pulp/content/", 200},
		{"/pulp/content/" + baseOS + "/", 200},
		{"/pulp/content/" + baseOS + "/20250102T030405/", 200},
		{"/pulp/content/" + baseOS + "/20250102T030405/repodata/repomd.xml", 200},
		{"/pulp/content/rocky", 301},
		{"/pulp/content/missing/", 404},
		{"/pulp/content/guarded/1/", 403},
	} {
		g := get(t, s.URL()+tc.path)
		h := do(t, http.MethodHead, s.URL()+tc.path, "", "")
		if g.status != tc.status || h.status != tc.status {
			t.Errorf("%s: GET %d HEAD %d, want %d", tc.path, g.status, h.status, tc.status)
		}
		if h.body != "" {
			t.Errorf("%s: HEAD body %q", tc.path, h.body)
		}
		for _, k := range []string{"Content-Type", "Content-Length", "Location", "Cache-Control"} {
			if g.header.Get(k) != h.header.Get(k) {
				t.Errorf("%s: %s differs: GET %q HEAD %q", tc.path, k, g.header.Get(k), h.header.Get(k))
			}
		}
		if cl := g.header.Get("Content-Length"); cl != fmt.Sprint(len(g.body)) {
			t.Errorf("%s: Content-Length %s for %d bytes", tc.path, cl, len(g.body))
		}
	}
}

type repomdDoc struct {
	XMLName  xml.Name `xml:"http://linux.duke.edu/metadata/repo repomd"`
	Revision string   `xml:"revision"`
	Data     []struct {
		Type     string `xml:"type,attr"`
		Location struct {
			Href string `xml:"href,attr"`
		} `xml:"location"`
		Checksum string `xml:"checksum"`
	} `xml:"data"`
}

func TestSyntheticRepomd(t *testing.T) {
	s := startServer(t, pulpfake.Options{})
	s.AddSnapshots(baseOS, "20250102T030405", "20250601T120000")

	var revisions []string
	for _, ts := range []string{"20250102T030405", "20250601T120000"} {
		r := get(t, s.ContentURL()+"/"+baseOS+"/"+ts+"/repodata/repomd.xml")
		expectStatus(t, "repomd", r, http.StatusOK)
		if cc := r.header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("Cache-Control %q", cc)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/xml" && ct != "text/xml" {
			t.Errorf("Content-Type %q", ct)
		}
		var doc repomdDoc
		if err := xml.Unmarshal([]byte(r.body), &doc); err != nil {
			t.Fatalf("repomd does not parse: %v\n%s", err, r.body)
		}
		if doc.Revision == "" || len(doc.Data) != 1 || doc.Data[0].Type != "primary" ||
			!strings.HasPrefix(doc.Data[0].Location.Href, "repodata/") || len(doc.Data[0].Checksum) != 64 {
			t.Errorf("unexpected repomd %+v", doc)
		}
		revisions = append(revisions, doc.Revision)

		// Nothing but repodata/repomd.xml exists.
		r = get(t, s.ContentURL()+"/"+baseOS+"/"+ts+"/repodata/")
		if got := entries(r.body); !slices.Equal(got, []string{"repomd.xml"}) {
			t.Errorf("repodata listing %q", got)
		}
		if !strings.Contains(r.body, "<title>Index of /pulp/content/"+baseOS+"/"+ts+"/repodata/</title>") {
			t.Errorf("in-distribution title wrong:\n%s", r.body)
		}
	}
	if revisions[0] == revisions[1] {
		t.Errorf("snapshots share revision %s", revisions[0])
	}
}

// makeRepo lays out a small createrepo-like tree with a secret beside it.
func makeRepo(t *testing.T) (dir, secret string) {
	t.Helper()
	parent := t.TempDir()
	dir = filepath.Join(parent, "repo")
	secret = "TOP-SECRET-" + t.Name()
	files := map[string]string{
		"repodata/repomd.xml":           `<repomd xmlns="http://linux.duke.edu/metadata/repo"><revision>42</revision></repomd>`,
		"repodata/abc-primary.xml.gz":   "gz",
		"Packages/a/acl-2.3.1.rpm":      "rpm-a",
		"Packages/l/libstdc++-11.5.rpm": "rpm-l",
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(parent, "secret.txt"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(parent, "secret.txt"), filepath.Join(dir, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	return dir, secret
}

func TestDirServing(t *testing.T) {
	dir, secret := makeRepo(t)
	s := startServer(t, pulpfake.Options{Format: pulpfake.Format322})
	bp := baseOS + "/20250102T030405"
	s.AddDistribution(pulpfake.Distribution{BasePath: bp, Dir: dir})
	base := s.ContentURL() + "/" + bp + "/"

	r := get(t, base)
	expectStatus(t, "root", r, http.StatusOK)
	// escape.txt points outside the root, so it is not listed.
	if got, want := entries(r.body), []string{"Packages/", "repodata/"}; !slices.Equal(got, want) {
		t.Errorf("root entries %q, want %q", got, want)
	}
	r = get(t, base+"Packages/l/")
	if got, want := entries(r.body), []string{"libstdc++-11.5.rpm"}; !slices.Equal(got, want) {
		t.Errorf("Packages/l entries %q, want %q", got, want)
	}

	r = get(t, base+"repodata/repomd.xml")
	expectStatus(t, "repomd", r, http.StatusOK)
	if !strings.Contains(r.body, "<revision>42</revision>") || r.header.Get("Cache-Control") != "no-cache" {
		t.Errorf("repomd %q headers %v", r.body, r.header)
	}
	r = get(t, base+"Packages/a/acl-2.3.1.rpm")
	if r.status != 200 || r.body != "rpm-a" || r.header.Get("Content-Type") != "application/x-rpm" {
		t.Errorf("rpm: %d %q %q", r.status, r.body, r.header.Get("Content-Type"))
	}
	if r.header.Get("Cache-Control") != "" {
		t.Error("rpm has Cache-Control")
	}
	expect404(t, "missing file", get(t, base+"Packages/a/missing.rpm"))

	for _, p := range []string{
		"../../../../../../secret.txt",
		"repodata/../../secret.txt",
		"%2e%2e/%2e%2e/secret.txt",
		"..%2f..%2fsecret.txt",
		"escape.txt",
		"./repodata/repomd.xml",
		"repodata//repomd.xml",
	} {
		got := rawGet(t, s.URL(), "/pulp/content/"+bp+"/"+p)
		if strings.Contains(got, secret) {
			t.Fatalf("%s leaked the secret", p)
		}
		if !strings.HasPrefix(got, "HTTP/1.1 404 ") {
			t.Errorf("%s: %q", p, firstLine(got))
		}
	}
}

// rawGet sends path verbatim, bypassing any client-side path cleaning.
func rawGet(t *testing.T, baseURL, path string) string {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(baseURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path)
	var b strings.Builder
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func TestRedirectToObjectStore(t *testing.T) {
	store := pulpfake.NewObjectStore(map[string][]byte{
		"bucket/snap/repodata/repomd.xml":           []byte("<repomd/>"),
		"bucket/snap/Packages/l/libstdc++-11.5.rpm": []byte("rpm"),
	})
	defer store.Close()

	s := startServer(t, pulpfake.Options{})
	bp := baseOS + "/20250102T030405"
	s.AddDistribution(pulpfake.Distribution{
		BasePath:    bp,
		RedirectURL: store.URL() + "/bucket/snap/",
		Guard:       &pulpfake.Guard{Users: map[string]string{"u": "p"}},
	})
	base := s.ContentURL() + "/" + bp + "/"

	expectStatus(t, "no creds", get(t, base+"repodata/repomd.xml"), http.StatusForbidden)
	r := do(t, http.MethodGet, base+"repodata/repomd.xml", "u", "p")
	expectStatus(t, "redirect", r, http.StatusFound)
	if loc := r.header.Get("Location"); loc != store.URL()+"/bucket/snap/repodata/repomd.xml" {
		t.Errorf("Location %q", loc)
	}
	r = do(t, http.MethodGet, base+"Packages/l/libstdc++-11.5.rpm", "u", "p")
	expectStatus(t, "redirect rpm", r, http.StatusFound)
	loc := r.header.Get("Location")
	// Directory listings are still answered by the content app.
	r = do(t, http.MethodGet, base, "u", "p")
	expectStatus(t, "listing", r, http.StatusOK)

	// A well-behaved client drops credentials for the other host...
	if r := get(t, loc); r.status != 200 || r.body != "rpm" {
		t.Errorf("store answered %d %q", r.status, r.body)
	}
	// ...a leaky one does not; the store records the difference.
	do(t, http.MethodGet, loc, "u", "p")
	store.SetRejectAuthorization(true)
	expectStatus(t, "reject auth", do(t, http.MethodGet, loc, "u", "p"), http.StatusBadRequest)
	expectStatus(t, "missing key", get(t, store.URL()+"/bucket/none"), http.StatusNotFound)

	reqs := store.Requests()
	if len(reqs) != 4 {
		t.Fatalf("store saw %d requests: %+v", len(reqs), reqs)
	}
	wantAuth := []bool{false, true, true, false}
	wantStatus := []int{200, 200, 400, 404}
	for i, rq := range reqs {
		if rq.HasAuth != wantAuth[i] || rq.Status != wantStatus[i] {
			t.Errorf("store request %d: %+v", i, rq)
		}
	}
	if reqs[0].Path != "/bucket/snap/Packages/l/libstdc++-11.5.rpm" {
		t.Errorf("store path %q", reqs[0].Path)
	}
}

func TestFilesAndHandlerWithHTTPTest(t *testing.T) {
	s := pulpfake.New(pulpfake.Options{Format: pulpfake.FormatLegacy})
	defer s.Close()
	s.AddDistribution(pulpfake.Distribution{BasePath: "a/b", Files: map[string][]byte{
		"x/y.txt": []byte("hello"), "z.json": []byte("{}"),
	}})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	r := get(t, ts.URL+"/pulp/content/a/b/")
	if got, want := entries(r.body), []string{"x/", "z.json"}; !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	if r := get(t, ts.URL+"/pulp/content/a/b/x/y.txt"); r.body != "hello" {
		t.Errorf("file body %q", r.body)
	}
	if s.URL() != "" {
		t.Errorf("URL before Start = %q", s.URL())
	}
}
