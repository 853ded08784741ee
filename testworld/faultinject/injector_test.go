package faultinject

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// serve starts the injector in front of a handler that counts the
// requests it served (it "acts") and answers 201 "made".
func serve(t *testing.T, rules ...Rule) (*Injector, *atomic.Int32, string) {
	t.Helper()
	done := make(chan struct{})
	in := New(Options{Kinds: []string{"thing_broken"}, Done: done,
		Answer: func(w http.ResponseWriter, _ *http.Request, svc string, status int, msg string) {
			w.WriteHeader(status)
			_, _ = io.WriteString(w, svc+": "+msg)
		}})
	if err := in.Set(rules...); err != nil {
		t.Fatal(err)
	}
	var acted atomic.Int32
	h := in.Wrap("svc", "/api/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		acted.Add(1)
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "made")
	}))
	srv := httptest.NewServer(h)
	t.Cleanup(func() { close(done); srv.Close() })
	return in, &acted, srv.URL
}

func post(t *testing.T, url string) (int, string, error) {
	t.Helper()
	resp, err := http.Post(url, "text/plain", strings.NewReader("x"))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func TestLoseAnswerDropsAfterActing(t *testing.T) {
	in, acted, url := serve(t, LoseAnswer("POST", "^things$", 2))
	if st, body, err := post(t, url+"/api/things"); err != nil || st != 201 || body != "made" {
		t.Fatalf("first: %d %q %v", st, body, err)
	}
	if _, _, err := post(t, url+"/api/things"); err == nil {
		t.Fatal("second: an answer came back")
	}
	if n := acted.Load(); n != 2 {
		t.Fatalf("acted %d times, want 2: a lost answer still acts", n)
	}
	if st, _, err := post(t, url+"/api/things"); err != nil || st != 201 {
		t.Fatalf("third: %d %v", st, err)
	}
	if h := in.Hits(); h[0] != 1 {
		t.Fatalf("hits %v", h)
	}
}

func TestLoseAnswerReplaced(t *testing.T) {
	f := LoseAnswer("", "", 1)
	f.Status, f.RetryAfter, f.Message = 503, "3", "proxy gave up"
	_, acted, url := serve(t, f)
	resp, err := http.Post(url+"/api/x", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || string(b) != "svc: proxy gave up" || resp.Header.Get("Retry-After") != "3" || acted.Load() != 1 {
		t.Fatalf("%d %q %v acted %d", resp.StatusCode, b, resp.Header, acted.Load())
	}
}

// TestFirstAnswerEndsTheSearch: latency rules stack, the first answering
// rule ends the search and alone counts; other services, methods, paths
// and requests outside the prefix are not touched.
func TestFirstAnswerEndsTheSearch(t *testing.T) {
	in, acted, url := serve(t,
		Rule{Latency: time.Millisecond},
		Rule{Service: "other", Status: 500},
		Rule{Method: "GET", Status: 500},
		Rule{PathPrefix: "x", Status: 429, Times: 1},
		Rule{Path: "^x$", Status: 503},
		Rule{Kind: "thing_broken"})
	for _, want := range []int{429, 503} {
		if st, _, err := post(t, url+"/api/x"); err != nil || st != want {
			t.Fatalf("want %d: %d %v", want, st, err)
		}
	}
	if st, _, err := post(t, url+"/outside"); err != nil || st != 201 {
		t.Fatalf("outside the prefix: %d %v", st, err)
	}
	if got, want := in.Hits(), []int{2, 0, 0, 1, 1, 0}; !slices.Equal(got, want) || acted.Load() != 1 {
		t.Fatalf("hits %v, want %v; acted %d", got, want, acted.Load())
	}
	for range 2 {
		if in.Take("thing_broken", "a") == nil {
			t.Fatal("an unlimited resource fault is taken every time")
		}
	}
}

// TestBodyPattern: a rule with Body applies only to requests whose body
// matches.
func TestBodyPattern(t *testing.T) {
	f := LoseAnswer("POST", "", 1)
	f.Body, f.Status = `"createImage"`, 502
	in, acted, url := serve(t, f)
	if st, _, err := post(t, url+"/api/action"); err != nil || st != 201 {
		t.Fatalf("another body: %d %v", st, err)
	}
	resp, err := http.Post(url+"/api/action", "application/json", strings.NewReader(`{"createImage": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 502 || acted.Load() != 2 || in.Hits()[0] != 1 {
		t.Fatalf("%d, acted %d, hits %v", resp.StatusCode, acted.Load(), in.Hits())
	}
}

func TestSetRefusesBadRules(t *testing.T) {
	in := New(Options{})
	if err := in.Set(Rule{Status: 500}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Rule{{Kind: "nope"}, {Path: "("}, {Name: "["}, {Body: "("}} {
		if err := in.Set(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if r := in.Rules(); len(r) != 1 || r[0].Status != 500 {
		t.Fatalf("the previous rules must stay: %+v", r)
	}
}

func TestRuleJSON(t *testing.T) {
	var rs []Rule
	err := json.Unmarshal([]byte(`[{"service":"compute","retry_after":1,"latency":150000000},{"path_prefix":"a/","retry_after":"0","latency":"1.5s","kind":"lose_answer","nth":3}]`), &rs)
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{{Service: "compute", RetryAfter: "1", Latency: 150 * time.Millisecond},
		{PathPrefix: "a/", RetryAfter: "0", Latency: 1500 * time.Millisecond, Kind: KindLoseAnswer, Nth: 3}}
	if len(rs) != 2 || rs[0] != want[0] || rs[1] != want[1] {
		t.Fatalf("%+v", rs)
	}
	b, _ := json.Marshal(rs[1])
	if !strings.Contains(string(b), `"latency":"1.5s"`) {
		t.Fatalf("marshal: %s", b)
	}
	if err := json.Unmarshal([]byte(`{"pathprefix":"x"}`), &rs[0]); err == nil {
		t.Fatal("unknown field accepted")
	}
}
