package openstack

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// Poll intervals of every wait (pollDelay): start fast (a port or a
// floating IP is there in a fraction of a second), then at most
// pollSteady apart while the transition may plausibly end, so the state
// change is seen less than a second late with at most 60 API calls a
// minute; a wait far longer than its transition usually takes (a stuck
// volume, a huge image upload) backs off to pollMax. Variables so tests
// can shorten them.
var (
	pollInitial = 150 * time.Millisecond
	pollSteady  = time.Second
	pollMax     = 3 * time.Second
)

// longWaitFactor: a wait is long when it has lasted this many times the
// transition's expected duration.
const longWaitFactor = 3

// expectedDurations are how long transitions usually take on a real
// cloud, by the wait's description (the first match counts). They only
// decide when polling backs off: lag stays under pollSteady until then.
var expectedDurations = []struct {
	what *regexp.Regexp
	d    time.Duration
}{
	{regexp.MustCompile(`^image .* to become active`), 5 * time.Minute}, // snapshot or volume upload of GBs
	{regexp.MustCompile(`^server .* to become ACTIVE`), time.Minute},    // image copy and spawn
	{regexp.MustCompile(`^volume .* to become`), time.Minute},           // created from an image
	{regexp.MustCompile(` to be (deleted|detached)$`), 20 * time.Second},
	{regexp.MustCompile(``), time.Minute},
}

// expectedDuration is the usual duration of the transition what waits for.
func expectedDuration(what string) time.Duration {
	for _, e := range expectedDurations {
		if e.what.MatchString(what) {
			return e.d
		}
	}
	return time.Minute
}

// pollDelay is the pause before the next check: prev is the previous
// pause (0 before the second check), elapsed the time since the wait
// began, expected the transition's usual duration. Pauses grow by half
// from pollInitial up to pollSteady, and up to pollMax once the wait is
// long.
func pollDelay(prev, elapsed, expected time.Duration) time.Duration {
	d := pollInitial
	if prev > 0 {
		d = prev * 3 / 2
	}
	limit := min(pollSteady, pollMax)
	if elapsed > longWaitFactor*expected {
		limit = pollMax
	}
	return max(min(d, limit), pollInitial)
}

// errTerminal marks a state a resource will never leave (server ERROR,
// volume error, image killed): waiting on is pointless.
type errTerminal struct{ msg string }

func (e *errTerminal) Error() string { return e.msg }

func terminal(format string, args ...any) error {
	return &errTerminal{msg: fmt.Sprintf(format, args...)}
}

// waitFor polls until check reports done, check fails, the timeout passes
// or ctx ends. check returns the status it saw, for the timeout message.
// what names the resource and the goal, e.g. "server 1234 to become ACTIVE".
func waitFor(ctx context.Context, what string, timeout time.Duration, check func(ctx context.Context) (status string, done bool, err error)) error {
	if timeout <= 0 {
		timeout = DefaultStateTimeout
	}
	start := time.Now()
	deadline := start.Add(timeout)
	expected := expectedDuration(what)
	var delay time.Duration
	var last string
	for {
		status, done, err := check(ctx)
		if status != "" {
			last = status
		}
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
			}
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if done {
			return nil
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			if last == "" {
				last = "unknown"
			}
			return fmt.Errorf("timed out after %s waiting for %s (last status %s); raise state_timeout if the cloud is slow", timeout, what, last)
		}
		delay = pollDelay(delay, time.Since(start), expected)
		t := time.NewTimer(min(delay, remaining))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
}

// isNotFound reports a 404 from any OpenStack API.
func isNotFound(err error) bool {
	return gophercloud.ResponseCodeIs(err, http.StatusNotFound)
}

// createTimeout bounds a call that creates a cloud resource.
const createTimeout = 5 * time.Minute

// createCtx is the context of a call that creates a cloud resource. It
// does not end with the build: a create interrupted mid-request may still
// happen on the cloud, after cleanup ran, and leak. Letting the call
// finish means its result is recorded for cleanup; the step after it sees
// the cancellation.
func createCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
}
