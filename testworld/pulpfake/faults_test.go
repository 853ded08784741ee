package pulpfake_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

func TestFaultTimesStatusRetryAfter(t *testing.T) {
	s := startServer(t, pulpfake.Options{})
	s.AddSnapshots(baseOS, "20250102T030405")
	s.SetFaults(
		pulpfake.Fault{PathPrefix: "rocky/9.6/BaseOS/", Status: 503, RetryAfter: "1", Times: 2},
		pulpfake.Fault{PathPrefix: "epel/", Status: 500},                  // never matches
		pulpfake.Fault{PathPrefix: "rocky/", Method: "HEAD", Status: 429}, // HEAD only
	)
	url := s.ContentURL() + "/" + baseOS + "/"
	for i := range 2 {
		r := get(t, url)
		expectStatus(t, "faulted", r, http.StatusServiceUnavailable)
		if r.header.Get("Retry-After") != "1" || r.body != "503: Service Unavailable" {
			t.Errorf("attempt %d: Retry-After %q body %q", i, r.header.Get("Retry-After"), r.body)
		}
	}
	expectStatus(t, "after Times", get(t, url), http.StatusOK)
	expectStatus(t, "HEAD fault", do(t, http.MethodHead, url, "", ""), http.StatusTooManyRequests)
	expectStatus(t, "HEAD fault unlimited", do(t, http.MethodHead, url, "", ""), http.StatusTooManyRequests)

	// SetFaults replaces the list and restarts counters.
	s.SetFaults(pulpfake.Fault{Status: 502, Times: 1})
	expectStatus(t, "replaced", get(t, url), http.StatusBadGateway)
	expectStatus(t, "spent", get(t, url), http.StatusOK)
	s.SetFaults()
	expectStatus(t, "cleared", do(t, http.MethodHead, url, "", ""), http.StatusOK)
}

func TestFaultRate(t *testing.T) {
	s := startServer(t, pulpfake.Options{})
	s.AddSnapshots(baseOS, "20250102T030405")
	s.SetFaults(pulpfake.Fault{Status: 500, Rate: 0.5})
	failed := 0
	const n = 200
	for range n {
		if get(t, s.ContentURL()+"/").status == 500 {
			failed++
		}
	}
	// P(outside [40,160]) for Binomial(200, 0.5) is astronomically small.
	if failed < 40 || failed > 160 {
		t.Errorf("%d of %d requests faulted at rate 0.5", failed, n)
	}
}

func TestFaultLatencyAndGlobalLatency(t *testing.T) {
	s := startServer(t, pulpfake.Options{Latency: 50 * time.Millisecond})
	s.AddSnapshots(baseOS, "20250102T030405")
	start := time.Now()
	expectStatus(t, "global", get(t, s.ContentURL()+"/"), http.StatusOK)
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("global latency not applied: %v", d)
	}
	s.SetLatency(0)
	s.SetFaults(pulpfake.Fault{PathPrefix: "rocky/", Latency: 150 * time.Millisecond})
	start = time.Now()
	expectStatus(t, "slow", get(t, s.ContentURL()+"/rocky/"), http.StatusOK)
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("fault latency not applied: %v", d)
	}
	start = time.Now()
	get(t, s.ContentURL()+"/")
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("unmatched request delayed %v", d)
	}

	// Latency honours client cancellation.
	s.SetLatency(time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.ContentURL()+"/", nil)
	start = time.Now()
	if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("expected deadline error, got %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancellation took %v", d)
	}
	s.SetLatency(0)
	waitFor(t, func() bool {
		reqs := s.Requests()
		return len(reqs) > 0 && reqs[len(reqs)-1].Status == 0
	})
}

func TestHangReleasedByClientTimeout(t *testing.T) {
	s := startServer(t, pulpfake.Options{})
	s.AddSnapshots(baseOS, "20250102T030405")
	s.SetFaults(pulpfake.Fault{PathPrefix: "rocky/", Hang: true, Times: 1})

	client := &http.Client{Timeout: 200 * time.Millisecond}
	start := time.Now()
	if _, err := client.Get(s.ContentURL() + "/rocky/"); err == nil {
		t.Fatal("hanging request answered")
	}
	if d := time.Since(start); d < 200*time.Millisecond || d > 3*time.Second {
		t.Errorf("hang lasted %v", d)
	}
	// The hung request is logged without a status once the server notices.
	waitFor(t, func() bool {
		reqs := s.Requests()
		return len(reqs) == 1 && reqs[0].Status == 0 && reqs[0].Path == "/pulp/content/rocky/"
	})
	expectStatus(t, "fault spent", get(t, s.ContentURL()+"/rocky/"), http.StatusOK)
}

func TestCloseReleasesHangs(t *testing.T) {
	s := pulpfake.New(pulpfake.Options{})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	s.AddSnapshots(baseOS, "20250102T030405")
	s.SetFaults(pulpfake.Fault{Hang: true})
	s.SetLatency(0)

	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 5 {
		wg.Go(func() {
			resp, err := http.Get(s.ContentURL() + "/")
			if err == nil {
				resp.Body.Close()
				err = errors.New("hanging request answered " + resp.Status)
			}
			errs <- err
		})
	}
	waitFor(t, func() bool { return s.FaultHits()[0] == 5 }) // all five are held
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	wg.Wait()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
	close(errs)
	for err := range errs {
		if err == nil {
			t.Error("hanging request succeeded")
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
