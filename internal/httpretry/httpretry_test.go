package httpretry

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// scripted answers each request with the next status in the list.
func scripted(t *testing.T, statuses ...int) (*httptest.Server, *atomic.Int32, *[]string) {
	t.Helper()
	var n atomic.Int32
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		i := int(n.Add(1)) - 1
		st := statuses[min(i, len(statuses)-1)]
		if st == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		w.WriteHeader(st)
		fmt.Fprintf(w, "answer %d", i)
	}))
	t.Cleanup(srv.Close)
	return srv, &n, &bodies
}

func quiet(*testing.T) func(string, ...any) { return func(string, ...any) {} }

func TestRetriesTransientStatusThenSucceeds(t *testing.T) {
	srv, n, _ := scripted(t, 503, 502, 200)
	c := &http.Client{Transport: &Transport{Initial: time.Millisecond, Logf: quiet(t)}}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "answer 2" || n.Load() != 3 {
		t.Fatalf("status %d body %q after %d requests", resp.StatusCode, body, n.Load())
	}
}

func TestPermanentErrorsSurfaceAtOnce(t *testing.T) {
	for _, st := range []int{400, 401, 403, 404, 409} {
		srv, n, _ := scripted(t, st, 200)
		c := &http.Client{Transport: &Transport{Initial: time.Millisecond, Logf: quiet(t)}}
		resp, err := c.Get(srv.URL)
		if err != nil || resp.StatusCode != st || n.Load() != 1 {
			t.Fatalf("status %d: got %v after %d requests", st, err, n.Load())
		}
		resp.Body.Close()
	}
	// With GatewayStatus a 500 is an answer, not a transient failure.
	srv, n, _ := scripted(t, 500, 200)
	c := &http.Client{Transport: &Transport{Initial: time.Millisecond, RetryStatus: GatewayStatus, Logf: quiet(t)}}
	resp, err := c.Get(srv.URL)
	if err != nil || resp.StatusCode != 500 || n.Load() != 1 {
		t.Fatalf("GatewayStatus retried a 500: %v, %d requests", err, n.Load())
	}
	resp.Body.Close()
}

func TestGivesUpAfterAttempts(t *testing.T) {
	srv, n, _ := scripted(t, 503)
	c := &http.Client{Transport: &Transport{Attempts: 3, Initial: time.Millisecond, Logf: quiet(t)}}
	resp, err := c.Get(srv.URL)
	if err != nil || resp.StatusCode != 503 || n.Load() != 3 {
		t.Fatalf("%v, status %v, %d requests", err, resp.StatusCode, n.Load())
	}
	resp.Body.Close()
}

func TestHonoursRetryAfterAndReplaysBody(t *testing.T) {
	srv, n, bodies := scripted(t, 429, 201)
	var delays []string
	tr := &Transport{Initial: time.Millisecond, Logf: func(f string, a ...any) { delays = append(delays, fmt.Sprintf(f, a...)) }}
	c := &http.Client{Transport: tr}
	resp, err := c.Post(srv.URL, "application/json", strings.NewReader(`{"server":{}}`))
	if err != nil || resp.StatusCode != 201 || n.Load() != 2 {
		t.Fatalf("%v after %d requests", err, n.Load())
	}
	resp.Body.Close()
	if len(delays) != 1 || !strings.Contains(delays[0], " in 1s ") || !strings.Contains(delays[0], "429") {
		t.Fatalf("retry log: %q", delays)
	}
	if (*bodies)[0] != `{"server":{}}` || (*bodies)[1] != (*bodies)[0] {
		t.Fatalf("body not replayed: %q", *bodies)
	}
}

func TestMaxRetryAfterCapsTheWait(t *testing.T) {
	srv, _, _ := scripted(t, 429, 200)
	var logs []string
	c := &http.Client{Transport: &Transport{MaxRetryAfter: 5 * time.Millisecond, Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }}}
	resp, err := c.Get(srv.URL)
	if err != nil || resp.StatusCode != 200 {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(logs) != 1 || !strings.Contains(logs[0], " in 5ms ") {
		t.Fatalf("log: %q", logs)
	}
}

func TestAttemptTimeoutRetriesAHang(t *testing.T) {
	var n atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		_, _ = io.WriteString(w, "late but fine")
	}))
	defer srv.Close()
	defer close(release)
	c := &http.Client{Transport: &Transport{AttemptTimeout: 100 * time.Millisecond, Initial: time.Millisecond, Logf: quiet(t)}}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "late but fine" || n.Load() != 2 {
		t.Fatalf("%q after %d requests", body, n.Load())
	}
}

func TestCancelStopsTheBackoff(t *testing.T) {
	srv, n, _ := scripted(t, 429) // Retry-After: 1s, every time
	ctx, cancel := context.WithCancel(context.Background())
	c := &http.Client{Transport: &Transport{Logf: func(string, ...any) { cancel() }}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "context canceled") || n.Load() != 1 {
		t.Fatalf("got %v after %d requests", err, n.Load())
	}
}

func TestConnectionRefusedIsNotRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	var retries int
	c := &http.Client{Transport: &Transport{Initial: time.Millisecond, Logf: func(string, ...any) { retries++ }}}
	resp, err := c.Get(url)
	if err == nil {
		resp.Body.Close()
	}
	if err == nil || retries != 0 {
		t.Fatalf("err %v, %d retries", err, retries)
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"-1":                            0,
		"soon":                          0,
		"Thu, 01 Jan 2026 00:00:10 GMT": 10 * time.Second,
		"Wed, 31 Dec 2025 23:00:00 GMT": 0,
	} {
		if got := RetryAfter(in, now); got != want {
			t.Errorf("RetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestNoReplayRetriesOnlyThrottling(t *testing.T) {
	for _, tc := range []struct {
		statuses []int
		want     int32
	}{{[]int{502, 200}, 1}, {[]int{503, 200}, 1}, {[]int{504, 200}, 1}, {[]int{429, 200}, 2}} {
		srv, n, _ := scripted(t, tc.statuses...)
		c := &http.Client{Transport: &Transport{Initial: time.Millisecond, MaxRetryAfter: time.Millisecond, Logf: quiet(t)}}
		req, _ := http.NewRequestWithContext(NoReplay(context.Background()), http.MethodPost, srv.URL, strings.NewReader("x"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n.Load() != tc.want {
			t.Errorf("%v: %d requests, want %d", tc.statuses, n.Load(), tc.want)
		}
	}
}

func TestNoReplayDoesNotRetryADroppedConnection(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	c := &http.Client{Transport: &Transport{Initial: time.Millisecond, Logf: quiet(t)}}
	req, _ := http.NewRequestWithContext(NoReplay(context.Background()), http.MethodPost, srv.URL, strings.NewReader("x"))
	if _, err := c.Do(req); err == nil || n.Load() != 1 {
		t.Fatalf("got %v after %d requests, want an error after 1", err, n.Load())
	}
}
