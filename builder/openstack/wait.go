package openstack

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"regexp"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/stackhpc/packer-plugin-fatimage/internal/httpretry"
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

// terminalError marks a state a resource will never leave (server ERROR,
// volume error, image killed): waiting on is pointless.
type terminalError struct{ msg string }

func (e *terminalError) Error() string { return e.msg }

func terminal(format string, args ...any) error {
	return &terminalError{msg: fmt.Sprintf(format, args...)}
}

// maxTransient bounds the errors in a row a wait tolerates, as the
// official builder tolerates up to 10: a 5xx or 429 the transport gave up
// on, a dropped connection, or a 404 of a resource the wait has not seen
// yet (a cloud may show it a moment after creating it).
const maxTransient = 10

// goneError: the resource is not there. Terminal once the wait has seen
// it; before that, tolerated like a transient error.
type goneError struct{ msg string }

func (e *goneError) Error() string { return e.msg }

func gone(format string, args ...any) error {
	return &goneError{msg: fmt.Sprintf(format, args...)}
}

// tolerable reports whether a check's error may pass: seen says whether
// the wait has seen the resource.
func tolerable(err error, seen bool) bool {
	var g *goneError
	var t *terminalError
	var code gophercloud.ErrUnexpectedResponseCode
	switch {
	case errors.As(err, &g):
		return !seen
	case errors.As(err, &t):
		return false
	case errors.As(err, &code):
		return code.Actual >= 500 || code.Actual == http.StatusTooManyRequests
	}
	return httpretry.TransientError(err)
}

// waitFor polls until check reports done, check fails, the timeout passes
// or ctx ends. check returns the status it saw, for the timeout message.
// what names the resource and the goal, e.g. "server 1234 to become ACTIVE".
// Up to maxTransient tolerable errors in a row are logged and polled past.
func waitFor(ctx context.Context, what string, timeout time.Duration, check func(ctx context.Context) (status string, done bool, err error)) error {
	if timeout <= 0 {
		timeout = DefaultStateTimeout
	}
	start := time.Now()
	deadline := start.Add(timeout)
	expected := expectedDuration(what)
	var delay time.Duration
	var last string
	transient := 0
	for {
		status, done, err := check(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case err != nil && (transient >= maxTransient || !tolerable(err, last != "")):
			if transient > 0 {
				return fmt.Errorf("waiting for %s: %w (after %d transient errors)", what, err, transient)
			}
			return fmt.Errorf("waiting for %s: %w", what, err)
		case err != nil:
			transient++
			log.Printf("[DEBUG] openstack: waiting for %s: %s (tolerated, %d of %d)", what, err, transient, maxTransient)
		case done:
			return nil
		default:
			transient = 0
			if status != "" {
				last = status
			}
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
// the cancellation. Its requests are never replayed by the transport
// (httpretry.NoReplay): createOrAdopt decides what a lost answer means.
func createCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(httpretry.NoReplay(context.WithoutCancel(ctx)), createTimeout)
}
