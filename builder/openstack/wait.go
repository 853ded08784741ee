package openstack

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// Poll intervals of every wait: start fast, back off to a few seconds.
// Variables so tests can shorten them.
var (
	pollInitial = 150 * time.Millisecond
	pollMax     = 3 * time.Second
)

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
	deadline := time.Now().Add(timeout)
	delay := pollInitial
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
		t := time.NewTimer(min(delay, remaining))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-t.C:
		}
		delay = min(delay*3/2, pollMax)
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
