package pulp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/figures"
)

// TestMain writes the hostile table of docs/reliability.md when
// scripts/reliability.sh asks (figures.Env).
func TestMain(m *testing.M) { os.Exit(figures.Main(m)) }

// hostileFigures are the columns of that table.
var hostileFigures = []string{"Hostile listing", "requests made", "outcome", "error size", "allocated while reading"}

// hostile serves a listing of n snapshots of path whose repomd.xml all
// answer 403, counting the requests and those that carried credentials.
type hostile struct {
	srv            *httptest.Server
	reqs, withAuth atomic.Int64
}

func startHostile(t *testing.T, listing func(w io.Writer)) *hostile {
	t.Helper()
	h := &hostile{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.reqs.Add(1)
		if _, _, ok := r.BasicAuth(); ok {
			h.withAuth.Add(1)
		}
		if r.URL.Path == "/pulp/content/"+path+"/" {
			listing(w)
			return
		}
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func snapshotsListing(n int) func(io.Writer) {
	return func(w io.Writer) {
		start := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
		fmt.Fprint(w, "<html><body><pre>\n")
		for i := range n {
			name := start.Add(time.Duration(i) * time.Minute).Format(TimestampLayout)
			fmt.Fprintf(w, "<a href=\"%s/\">%s/</a>\n", name, name)
		}
		fmt.Fprint(w, "</pre></body></html>\n")
	}
}

// One repository of 1,000 snapshots that all answer 403: at most
// MaxCandidates are tried (with credentials), and the error says so, stays
// short and names the cap and the way out.
func TestCandidatesTriedAreCapped(t *testing.T) {
	h := startHostile(t, snapshotsListing(1000))
	_, err := client(t, secret).Resolve(context.Background(), Query{ContentURL: h.srv.URL + "/pulp/content", Path: path, Mode: ModeLatest, Verify: true})
	if err == nil {
		t.Fatal("resolved a repository whose every snapshot answers 403")
	}
	if got := h.reqs.Load(); got != 1+MaxCandidates {
		t.Fatalf("%d requests, want the listing and %d candidates", got, MaxCandidates)
	}
	msg := err.Error()
	for _, want := range []string{"none of the 10 newest snapshots is usable", "990 older ones were not tried, as at most 10 are (the cap)", `mode = "pinned" or "not_after"`, "20230101T163900 answered 403 Forbidden", "check username and password"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q:\n%s", want, msg)
		}
	}
	if len(msg) > 2048 {
		t.Errorf("the error is %d bytes", len(msg))
	}
	t.Logf("%d requests (%d with credentials), error %d bytes", h.reqs.Load(), h.withAuth.Load(), len(msg))
	figures.Record(t, "hostile", hostileFigures, "1,000 snapshots, every one answers 403", fmt.Sprint(h.reqs.Load()),
		"refused: none of the 10 newest snapshots is usable", figures.KB(len(msg)), "-")
}

// Fewer candidates than the cap: every one is tried, the old message.
func TestCandidatesUnderTheCapAllTried(t *testing.T) {
	h := startHostile(t, snapshotsListing(3))
	_, err := client(t, secret).Resolve(context.Background(), Query{ContentURL: h.srv.URL + "/pulp/content", Path: path, Mode: ModeLatest, Verify: true})
	if err == nil || !strings.Contains(err.Error(), "no usable snapshot (") || h.reqs.Load() != 4 {
		t.Fatalf("%d requests: %v", h.reqs.Load(), err)
	}
}

// A listing larger than MaxListingBytes is refused after reading at most
// that much, whatever the server would send, and memory stays bounded.
func TestListingSizeIsCapped(t *testing.T) {
	h := startHostile(t, func(w io.Writer) {
		fmt.Fprint(w, "<html><body><pre>\n")
		line := []byte(`<a href="20250101T000000/">20250101T000000/</a>` + "\n")
		for range 96 << 20 / len(line) {
			if _, err := w.Write(line); err != nil {
				return // the client hung up: what the cap is for
			}
		}
	})
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := clientTimeout(t, secret, time.Minute).Snapshots(context.Background(), h.srv.URL+"/pulp/content", path)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "the listing is larger than 8 MiB (the cap)") {
		t.Fatalf("a 96 MiB listing: %v", err)
	}
	grew := int64(after.TotalAlloc - before.TotalAlloc)
	if grew > 64<<20 {
		t.Fatalf("reading the listing allocated %d MiB", grew>>20)
	}
	figures.Record(t, "hostile", hostileFigures, "a 96 MB listing", fmt.Sprint(h.reqs.Load()),
		"refused: larger than 8 MiB (the cap)", figures.KB(len(err.Error())), figures.KB(int(grew)))
	// A listing just under the cap still parses.
	h = startHostile(t, snapshotsListing(50000))
	names, err := clientTimeout(t, secret, time.Minute).Snapshots(context.Background(), h.srv.URL+"/pulp/content", path)
	if err != nil || len(names) != 50000 {
		t.Fatalf("%d names: %v", len(names), err)
	}
}

// Only real UTC times name snapshots: the regular form alone admits
// 99999999T999999, which would sort newest.
func TestImpossibleTimestampsAreNotSnapshots(t *testing.T) {
	tomorrow := time.Now().UTC().Add(48 * time.Hour).Format(TimestampLayout)
	body := `<pre><a href="20250101T000000/">a</a><a href="99999999T999999/">x</a><a href="20250230T000000/">feb 30</a>` +
		`<a href="20251301T000000/">month 13</a><a href="20250101T240000/">hour 24</a><a href="20250101T236000/">minute 60</a>` +
		`<a href="20250101T000060/">second 60</a><a href="00000000T000000/">zero</a><a href="` + tomorrow + `/">future</a>` +
		`<a href="20240229T120000Z/">leap day checkpoint</a></pre>`
	names, err := ParseListing(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, " ") != "20240229T120000Z 20250101T000000" {
		t.Fatalf("snapshots %q", names)
	}
	for _, bad := range []string{"99999999T999999", "20250230T000000", "20250101T240000", "20250101T000060"} {
		if _, err := ParseTimestamp(bad); err == nil || !strings.Contains(err.Error(), "is not a real UTC time") {
			t.Errorf("ParseTimestamp(%q): %v", bad, err)
		}
	}
}

// A Pulp API whose every page links to a next one: list stops at the cap.
func TestAPIPagesAreCapped(t *testing.T) {
	var reqs atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := reqs.Add(1)
		fmt.Fprintf(w, `{"count": 1000000, "next": "http://%s/pulp/api/v3/repositories/rpm/rpm/?offset=%d", "results": [{"name": "r%d"}]}`, r.Host, n, n)
	}))
	t.Cleanup(srv.Close)
	a, err := NewAPI(srv.URL, ClientOptions{Username: "u", Password: "p", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.RepositoryByName(context.Background(), "r")
	if err == nil || !strings.Contains(err.Error(), "more than 20 pages (the cap)") || reqs.Load() != 20 {
		t.Fatalf("%d requests: %v", reqs.Load(), err)
	}
}

// An API answer over maxAnswerBytes is refused, naming the cap.
func TestAPIAnswerSizeIsCapped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"versions": [`)
		for range 5 << 20 / 32 {
			fmt.Fprint(w, `{"component": "x", "version": "1"},`)
		}
		fmt.Fprint(w, `{"component": "rpm", "version": "1"}]}`)
	}))
	t.Cleanup(srv.Close)
	a, err := NewAPI(srv.URL, ClientOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Status(context.Background()); err == nil || !strings.Contains(err.Error(), "the answer is larger than 4 MiB (the cap)") {
		t.Fatalf("got %v", err)
	}
}

// A task that never ends on a Pulp that never answers the cancel: Ctrl-C
// (the caller's context) ends the wait within the 1 s cancel deadline,
// not the 10 s one a timed-out wait gets.
func TestInterruptedTaskWaitIsPrompt(t *testing.T) {
	polled := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			select {
			case polled <- struct{}{}:
			default:
			}
			fmt.Fprintf(w, `{"pulp_href": %q, "state": "running"}`, r.URL.Path)
		case http.MethodPatch:
			_, _ = io.Copy(io.Discard, r.Body) // so a client hanging up cancels r.Context()
			select {                           // a Pulp too busy to answer the cancel
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		}
	}))
	t.Cleanup(srv.Close)
	a, err := NewAPI(srv.URL, ClientOptions{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-polled; cancel() }()
	start := time.Now()
	_, err = a.Wait(ctx, &Task{Href: "/pulp/api/v3/tasks/1/"})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "context canceled") || took > 2*time.Second {
		t.Fatalf("wait ended after %s: %v", took, err)
	}
	t.Logf("the interrupted wait ended %s after it began", took.Round(time.Millisecond))
}
