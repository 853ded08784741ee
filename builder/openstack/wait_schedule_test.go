package openstack

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// pollSchedule simulates a wait of length total with the production
// intervals: the times of the checks, first at 0.
func pollSchedule(t *testing.T, what string, total time.Duration) []time.Duration {
	t.Helper()
	at := []time.Duration{0}
	var delay time.Duration
	for now := time.Duration(0); now < total; {
		delay = pollDelay(delay, now, expectedDuration(what))
		now += delay
		at = append(at, now)
	}
	return at
}

// The schedule: fast at first, never more than a second between checks
// while the transition may plausibly end (lag < 1 s, at most 60 calls a
// minute), and at most 20 a minute once the wait is long.
func TestPollSchedule(t *testing.T) {
	old := [3]time.Duration{pollInitial, pollSteady, pollMax}
	pollInitial, pollSteady, pollMax = 150*time.Millisecond, time.Second, 3*time.Second
	defer func() { pollInitial, pollSteady, pollMax = old[0], old[1], old[2] }()

	for _, tc := range []struct {
		what     string
		expected time.Duration
	}{
		{"server s to become ACTIVE", time.Minute},
		{"volume v to become available", time.Minute},
		{"image i to become active", 5 * time.Minute},
		{"server s to be deleted", 20 * time.Second},
		{"RackConnect to deploy server s", time.Minute},
	} {
		t.Run(tc.what, func(t *testing.T) {
			if got := expectedDuration(tc.what); got != tc.expected {
				t.Fatalf("expected duration %s, want %s", got, tc.expected)
			}
			long := longWaitFactor * tc.expected
			at := pollSchedule(t, tc.what, long+10*time.Minute)
			// fast at first: a sub-second transition is seen within 150 ms
			// of the first check, and five checks fall in the first 1.5 s
			if at[1] != 150*time.Millisecond {
				t.Errorf("second check at %s, want 150ms", at[1])
			}
			n := 0
			for _, a := range at {
				if a <= 1500*time.Millisecond {
					n++
				}
			}
			if n < 5 {
				t.Errorf("%d checks in the first 1.5 s, want at least 5", n)
			}
			for i := 1; i < len(at); i++ {
				gap := at[i] - at[i-1]
				switch {
				case at[i-1] <= long && gap > time.Second:
					t.Fatalf("gap %s at %s, before the wait is long (%s): lag over a second", gap, at[i-1], long)
				case gap > 3*time.Second:
					t.Fatalf("gap %s at %s: over pollMax", gap, at[i-1])
				}
			}
			// API calls per minute, in every whole minute of the wait
			for m := time.Duration(0); m+time.Minute <= at[len(at)-1]; m += time.Minute {
				calls := 0
				for _, a := range at {
					if a >= m && a < m+time.Minute {
						calls++
					}
				}
				limit := 60 + 7 // the first minute holds the fast start
				if m > 0 {
					limit = 60
				}
				if m >= long+10*time.Second {
					limit = 20
				}
				if calls > limit {
					t.Errorf("minute starting at %s: %d calls, limit %d", m, calls, limit)
				}
			}
		})
	}
}

// A wait with a Ui says the status and the time elapsed at least every
// progressInterval, even while its polls are further apart.
func TestWaitProgress(t *testing.T) {
	old := [4]time.Duration{pollInitial, pollSteady, pollMax, progressInterval}
	pollInitial, pollSteady, pollMax, progressInterval = time.Second, 2*time.Second, 2*time.Second, 200*time.Millisecond
	defer func() { pollInitial, pollSteady, pollMax, progressInterval = old[0], old[1], old[2], old[3] }()

	var mu sync.Mutex
	var lines []string
	var at []time.Time
	ctx := withProgress(bg, func(s string) {
		mu.Lock()
		defer mu.Unlock()
		lines, at = append(lines, s), append(at, time.Now())
	})
	start := time.Now()
	err := waitFor(ctx, "server x to become ACTIVE", time.Minute, func(context.Context) (string, bool, error) {
		return "BUILD", time.Since(start) > 2500*time.Millisecond, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) < 6 {
		t.Fatalf("%d progress lines in 2.5 s at a 200 ms interval: %q", len(lines), lines)
	}
	line := regexp.MustCompile(`^Still waiting for server x to become ACTIVE: status BUILD, \d+s elapsed$`)
	prev := start
	for i, l := range lines {
		if !line.MatchString(l) {
			t.Errorf("line %d: %q", i, l)
		}
		if gap := at[i].Sub(prev); gap > 600*time.Millisecond {
			t.Errorf("line %d came %s after the previous one; polls are 1-2 s apart, lines must not wait for them", i, gap)
		}
		prev = at[i]
	}
	if !strings.HasSuffix(lines[len(lines)-1], ", 2s elapsed") {
		t.Errorf("last line %q, want 2s elapsed", lines[len(lines)-1])
	}
}
