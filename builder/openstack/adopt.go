package openstack

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/httpretry"
)

// createAttempts bounds the tries of one create whose answers are lost,
// as many as the transport makes of other calls; adoptDelay, times the
// number of lost tries, is the pause before looking for what a lost try
// made, so a cloud still finishing it shows it and a struggling gateway
// gets room. A variable so tests can shorten it.
const createAttempts = 8

var adoptDelay = 2 * time.Second

// answerLost reports whether err may hide an action the cloud took: a
// gateway's error (the request may have been forwarded) or a connection
// dropped or timed out before the answer came.
func answerLost(err error) bool {
	for _, st := range []int{http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout} {
		if gophercloud.ResponseCodeIs(err, st) {
			return true
		}
	}
	return err != nil && httpretry.TransientError(err)
}

// createOrAdopt makes one resource with create, which runs under
// createCtx so the transport never replays it. When an answer is lost,
// the cloud may have acted: find looks for what that try made (by build
// id or name) and adopts it, and only when there is nothing does create
// run again. A refusal after a lost try (a name taken, a volume busy
// uploading) may be that try's doing, so find is asked then too.
func createOrAdopt[T any](ctx context.Context, ui packersdk.Ui, what string,
	create func(context.Context) (T, error), find func(context.Context) (T, bool, error)) (T, error) {
	var zero T
	lost := 0
	for {
		cctx, cancel := createCtx(ctx)
		v, err := create(cctx)
		cancel()
		switch {
		case err == nil:
			return v, nil
		case !answerLost(err) && lost > 0:
			if got, ok, ferr := find(ctx); ferr == nil && ok {
				ui.Say(fmt.Sprintf("The answer to %s was lost; adopting what it made", what))
				return got, nil
			}
			return zero, fmt.Errorf("%s: %w (after %d lost answer(s))", what, err, lost)
		case !answerLost(err):
			return zero, fmt.Errorf("%s: %w", what, err)
		}
		lost++
		if lost >= createAttempts {
			return zero, fmt.Errorf("%s: the answer was lost %d times: %w", what, lost, err)
		}
		log.Printf("[DEBUG] openstack: the answer to %s may be lost (%s); looking for what it made", what, err)
		if err := sleepCtx(ctx, time.Duration(lost)*adoptDelay); err != nil {
			return zero, fmt.Errorf("%s: %w", what, err)
		}
		got, ok, ferr := find(ctx)
		if ferr != nil {
			return zero, fmt.Errorf("%s: the answer was lost (%v), and looking for what it made failed: %w", what, err, ferr)
		}
		if ok {
			ui.Say(fmt.Sprintf("The answer to %s was lost; adopting what it made", what))
			return got, nil
		}
		// The transport's retry line, so a log reads the same whoever retried.
		log.Printf("[DEBUG] openstack: retrying %s (attempt %d of %d): %s", what, lost+1, createAttempts, describeLost(err))
	}
}

// describeLost is a lost answer as the transport's retry line puts it: the
// status, or the connection's error.
func describeLost(err error) string {
	var code gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &code) {
		return fmt.Sprintf("%d %s", code.Actual, http.StatusText(code.Actual))
	}
	return err.Error()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
