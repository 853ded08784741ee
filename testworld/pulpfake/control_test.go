package pulpfake_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

// control sends a JSON control request and decodes the JSON answer into out
// (if non-nil), returning the status.
func control(t *testing.T, s *pulpfake.Server, method, path, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return resp.StatusCode
}

func TestControlEndpoint(t *testing.T) {
	s := startServer(t, pulpfake.Options{})
	// A catch-all fault must not affect the control endpoint.
	s.SetFaults(pulpfake.Fault{Status: 500})
	if st := control(t, s, "PUT", "/_control/faults", `[]`, nil); st != 200 {
		t.Fatalf("PUT faults with catch-all fault active: %d", st)
	}

	// Distributions.
	st := control(t, s, "POST", "/_control/distributions",
		`{"base_path":"/rocky/9.6/BaseOS/x86_64/os/20250102T030405/","guard":{"users":{"u":"p"},"reason":"nope"}}`, nil)
	if st != http.StatusCreated {
		t.Fatalf("POST distribution: %d", st)
	}
	control(t, s, "POST", "/_control/distributions", `{"base_path":"rocky/9.6/BaseOS/x86_64/os/20250601T120000","hidden":true,"no_publication":true,"redirect_url":"http://x/"}`, nil)
	for _, bad := range []string{`{"base_path":""}`, `{"base_path":"a/../b"}`, `{"basepath":"a"}`, `not json`} {
		if st := control(t, s, "POST", "/_control/distributions", bad, nil); st != http.StatusBadRequest {
			t.Errorf("POST %s: %d", bad, st)
		}
	}
	var dists []pulpfake.Distribution
	control(t, s, "GET", "/_control/distributions", "", &dists)
	if len(dists) != 2 || dists[0].BasePath != "rocky/9.6/BaseOS/x86_64/os/20250102T030405" ||
		dists[0].Guard == nil || dists[0].Guard.Users["u"] != "p" || dists[0].Guard.Reason != "nope" ||
		!dists[1].Hidden || !dists[1].NoPublication || dists[1].RedirectURL != "http://x/" {
		t.Errorf("distributions %+v", dists)
	}
	if got := s.Distributions(); !slices.EqualFunc(got, dists, func(a, b pulpfake.Distribution) bool { return a.BasePath == b.BasePath }) {
		t.Errorf("Distributions() %+v", got)
	}
	r := get(t, s.ContentURL()+"/rocky/9.6/BaseOS/x86_64/os/")
	if got := entries(r.body); !slices.Equal(got, []string{"20250102T030405/"}) {
		t.Errorf("listing %q", got)
	}
	if r := get(t, s.ContentURL()+"/rocky/9.6/BaseOS/x86_64/os/20250102T030405/"); r.body != "403: nope" {
		t.Errorf("guard from JSON: %d %q", r.status, r.body)
	}
	if st := control(t, s, "DELETE", "/_control/distributions?base_path=rocky/9.6/BaseOS/x86_64/os/20250102T030405", "", nil); st != 200 {
		t.Errorf("DELETE: %d", st)
	}
	if st := control(t, s, "DELETE", "/_control/distributions?base_path=nope", "", nil); st != 404 {
		t.Errorf("DELETE missing: %d", st)
	}
	control(t, s, "GET", "/_control/distributions", "", &dists)
	if len(dists) != 1 {
		t.Errorf("after DELETE: %+v", dists)
	}

	// Format.
	var fb pulpfake.FormatBody
	control(t, s, "PUT", "/_control/format", `{"format":"legacy"}`, &fb)
	if fb.Format != "legacy" || s.Format() != pulpfake.FormatLegacy {
		t.Errorf("format %q / %v", fb.Format, s.Format())
	}
	if !strings.HasPrefix(get(t, s.ContentURL()+"/").body, "<!DOCTYPE html>") {
		t.Error("legacy format not applied")
	}
	if st := control(t, s, "PUT", "/_control/format", `{"format":"9"}`, nil); st != 400 {
		t.Errorf("bad format: %d", st)
	}
	control(t, s, "GET", "/_control/format", "", &fb)
	if fb.Format != "legacy" {
		t.Errorf("GET format %q", fb.Format)
	}

	// Latency.
	var lb pulpfake.LatencyBody
	control(t, s, "PUT", "/_control/latency", `{"latency":"300ms"}`, &lb)
	if lb.Latency != "300ms" || s.Latency() != 300*time.Millisecond {
		t.Errorf("latency %q / %v", lb.Latency, s.Latency())
	}
	if st := control(t, s, "PUT", "/_control/latency", `{"latency":"fast"}`, nil); st != 400 {
		t.Errorf("bad latency: %d", st)
	}
	start := time.Now()
	control(t, s, "GET", "/_control/latency", "", &lb) // control is never delayed...
	if time.Since(start) >= 300*time.Millisecond {
		t.Error("control endpoint delayed by latency")
	}
	start = time.Now()
	get(t, s.ContentURL()+"/") // ...content is
	if time.Since(start) < 300*time.Millisecond {
		t.Error("latency from control endpoint not applied")
	}
	control(t, s, "PUT", "/_control/latency", `{"latency":"0s"}`, nil)

	// Faults, with Latency as a duration string.
	var faults []pulpfake.Fault
	control(t, s, "PUT", "/_control/faults",
		`[{"path_prefix":"rocky/","method":"GET","status":503,"retry_after":"2","times":1,"rate":1,"latency":"20ms"},{"hang":true,"path_prefix":"never/"}]`, &faults)
	want := []pulpfake.Fault{
		{PathPrefix: "rocky/", Method: "GET", Status: 503, RetryAfter: "2", Times: 1, Rate: 1, Latency: 20 * time.Millisecond},
		{PathPrefix: "never/", Hang: true},
	}
	if !slices.Equal(faults, want) || !slices.Equal(s.Faults(), want) {
		t.Errorf("faults %+v, want %+v", faults, want)
	}
	raw := getRaw(t, s.URL()+"/_control/faults")
	if !strings.Contains(raw, `"latency":"20ms"`) {
		t.Errorf("latency not encoded as duration string: %s", raw)
	}
	r = get(t, s.ContentURL()+"/rocky/")
	if r.status != 503 || r.header.Get("Retry-After") != "2" {
		t.Errorf("fault from JSON: %d %v", r.status, r.header)
	}
	if st := control(t, s, "PUT", "/_control/faults", `[{"pathprefix":"x"}]`, nil); st != 400 {
		t.Errorf("unknown fault field accepted: %d", st)
	}

	// Requests: control requests are not logged.
	var reqs []pulpfake.Request
	control(t, s, "GET", "/_control/requests", "", &reqs)
	if len(reqs) == 0 {
		t.Fatal("no requests logged")
	}
	for _, rq := range reqs {
		if strings.HasPrefix(rq.Path, "/_control") {
			t.Errorf("control request logged: %+v", rq)
		}
	}
	if last := reqs[len(reqs)-1]; last.Path != "/pulp/content/rocky/" || last.Status != 503 || last.Method != "GET" {
		t.Errorf("last request %+v", last)
	}
	control(t, s, "DELETE", "/_control/requests", "", nil)
	control(t, s, "GET", "/_control/requests", "", &reqs)
	if len(reqs) != 0 || len(s.Requests()) != 0 {
		t.Errorf("requests not reset: %+v", reqs)
	}

	if st := control(t, s, "GET", "/_control/nope", "", nil); st != 404 {
		t.Errorf("unknown control path: %d", st)
	}
}

func getRaw(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestFaultJSON(t *testing.T) {
	f := pulpfake.Fault{PathPrefix: "a/", Status: 429, Latency: 1500 * time.Millisecond}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"latency":"1.5s"`)) {
		t.Errorf("marshal: %s", b)
	}
	var back pulpfake.Fault
	if err := json.Unmarshal(b, &back); err != nil || back != f {
		t.Errorf("round trip: %+v %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"latency":2000000}`), &back); err != nil || back.Latency != 2*time.Millisecond {
		t.Errorf("integer latency: %+v %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"latency":"soon"}`), &back); err == nil {
		t.Error("bad latency accepted")
	}
}

func TestRequestLog(t *testing.T) {
	s := startServer(t, pulpfake.Options{})
	s.AddDistribution(pulpfake.Distribution{BasePath: "g/1",
		Guard: &pulpfake.Guard{Users: map[string]string{"alice": "hunter2-password"}}})
	do(t, http.MethodGet, s.ContentURL()+"/g/1/", "alice", "hunter2-password")
	do(t, http.MethodHead, s.ContentURL()+"/g/1/repodata/repomd.xml", "alice", "wrong-password")
	get(t, s.ContentURL()+"/g/1/")
	get(t, s.URL()+"/elsewhere")

	reqs := s.Requests()
	want := []pulpfake.Request{
		{Method: "GET", Path: "/pulp/content/g/1/", Username: "alice", HasAuth: true, Status: 200},
		{Method: "HEAD", Path: "/pulp/content/g/1/repodata/repomd.xml", Username: "alice", HasAuth: true, Status: 403},
		{Method: "GET", Path: "/pulp/content/g/1/", Status: 403},
		{Method: "GET", Path: "/elsewhere", Status: 404},
	}
	if len(reqs) != len(want) {
		t.Fatalf("requests %+v", reqs)
	}
	for i := range want {
		got := reqs[i]
		if got.Time.IsZero() || time.Since(got.Time) > time.Minute {
			t.Errorf("request %d time %v", i, got.Time)
		}
		got.Time = time.Time{}
		if got != want[i] {
			t.Errorf("request %d: %+v, want %+v", i, got, want[i])
		}
	}
	b, _ := json.Marshal(reqs)
	if bytes.Contains(b, []byte("password")) || bytes.Contains(b, []byte("hunter2")) {
		t.Errorf("password leaked into log: %s", b)
	}
	// Requests returns a copy.
	reqs[0].Username = "changed"
	if s.Requests()[0].Username != "alice" {
		t.Error("Requests does not return a copy")
	}
	s.ResetRequests()
	if len(s.Requests()) != 0 {
		t.Error("ResetRequests did not reset")
	}
}

// TestConcurrentUse exercises the server under -race with many clients while
// it is being reconfigured.
func TestConcurrentUse(t *testing.T) {
	s := startServer(t, pulpfake.Options{})
	s.AddSnapshots(baseOS, "20250102T030405")
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 5 * time.Second}
	for i := range 16 {
		wg.Go(func() {
			for j := range 20 {
				url := s.ContentURL() + "/" + baseOS + "/"
				if j%2 == 0 {
					url += "20250102T030405/repodata/repomd.xml"
				}
				resp, err := client.Get(url)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body) // only the status matters
				resp.Body.Close()
				if resp.StatusCode != 200 && resp.StatusCode != 500 {
					t.Errorf("client %d: status %d", i, resp.StatusCode)
				}
			}
		})
	}
	wg.Go(func() {
		for j := range 50 {
			bp := fmt.Sprintf("%s/2026%04dT000000", baseOS, j)
			s.AddDistribution(pulpfake.Distribution{BasePath: bp, Hidden: j%2 == 0})
			s.SetFaults(pulpfake.Fault{PathPrefix: "nothing/", Status: 500, Times: j})
			s.SetFormat(pulpfake.Format(j % 3))
			s.SetLatency(time.Duration(j%2) * time.Millisecond)
			s.Requests()
			if j%10 == 0 {
				s.ResetRequests()
			}
			s.RemoveDistribution(bp)
		}
	})
	wg.Wait()
}
