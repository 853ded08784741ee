// Package httpretry is an http.RoundTripper that retries transient failures
// (throttling, gateway errors, resets and timeouts) with capped exponential
// backoff, honouring Retry-After, and never sleeping past a cancelled context.
//
// The SDK's retry package sleeps without watching the context and cannot see
// a response's Retry-After, so the loop is kept here; its Backoff still
// computes the delays.
package httpretry

import (
	"context"
	"errors"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/hashicorp/packer-plugin-sdk/retry"
)

// Defaults used when a Transport field is zero.
const (
	DefaultAttempts      = 5
	DefaultInitial       = 250 * time.Millisecond
	DefaultMax           = 10 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
)

// Transport retries a request until it succeeds, fails permanently, runs out
// of attempts, or its context ends.
type Transport struct {
	// Base sends each attempt; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Attempts is the total number of tries (first one included).
	Attempts int
	// Initial and Max bound the exponential backoff between attempts.
	Initial, Max time.Duration
	// MaxRetryAfter caps how long a server's Retry-After may make us wait.
	MaxRetryAfter time.Duration
	// AttemptTimeout bounds each attempt, body read included; 0 means none.
	AttemptTimeout time.Duration
	// RetryStatus says which HTTP statuses are transient. Nil retries 429
	// and every 5xx.
	RetryStatus func(status int) bool
	// Logf, when set, is told about each retry. It never sees credentials:
	// only the method, URL (which carries none) and status or error.
	Logf func(format string, args ...any)
}

// GatewayStatus is a RetryStatus for APIs where a 500 is a real answer:
// only 429, 502, 503 and 504 are retried.
func GatewayStatus(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

type noReplayKey struct{}

// NoReplay marks requests that may act twice if sent twice (a create):
// they are retried only after a 429, which a cloud answers without
// acting. A gateway error or a dropped connection may hide an action
// that happened, so it goes back to the caller, who can look for what
// was made before trying again.
func NoReplay(ctx context.Context) context.Context {
	return context.WithValue(ctx, noReplayKey{}, true)
}

func anyServerStatus(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	attempts := orDefault(t.Attempts, DefaultAttempts)
	backoff := retry.Backoff{
		InitialBackoff: orDefault(t.Initial, DefaultInitial),
		MaxBackoff:     orDefault(t.Max, DefaultMax),
		Multiplier:     2,
	}
	ctx := req.Context()
	for attempt := 1; ; attempt++ {
		try, cancel, err := t.prepare(req, attempt)
		if err != nil {
			return nil, err
		}
		resp, err := base.RoundTrip(try)
		// A timed-out attempt surfaces as a deadline error on the attempt's
		// context while the caller's own context is still live.
		wait, again := t.classify(ctx, resp, err)
		if !again || attempt >= attempts {
			if resp != nil && cancel != nil {
				resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
			} else if cancel != nil {
				cancel()
			}
			return resp, err
		}
		if resp != nil {
			// Drain a little so the connection can be reused.
			_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
			_ = resp.Body.Close()
		}
		if cancel != nil {
			cancel()
		}
		delay := backoff.Linear()
		delay = delay/2 + rand.N(delay/2+1) //nolint:gosec // jitter so concurrent clients spread out, not a secret
		if wait > 0 {
			delay = min(wait, orDefault(t.MaxRetryAfter, DefaultMaxRetryAfter))
		}
		t.logf("retrying %s %s in %s (attempt %d of %d): %s", req.Method, req.URL.Redacted(), delay.Round(time.Millisecond), attempt+1, attempts, describe(resp, err))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

// prepare clones the request for one attempt, rewinding the body and adding
// the per-attempt deadline.
func (t *Transport) prepare(req *http.Request, attempt int) (*http.Request, context.CancelFunc, error) {
	ctx := req.Context()
	var cancel context.CancelFunc
	if t.AttemptTimeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, t.AttemptTimeout)
	}
	try := req.Clone(ctx)
	if attempt > 1 && req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			if cancel != nil {
				cancel()
			}
			return nil, nil, errors.New("httpretry: request body cannot be replayed")
		}
		body, err := req.GetBody()
		if err != nil {
			if cancel != nil {
				cancel()
			}
			return nil, nil, err
		}
		try.Body = body
	}
	return try, cancel, nil
}

// classify says whether an attempt's outcome is transient and, for a
// throttled response, how long the server asked us to wait.
func (t *Transport) classify(ctx context.Context, resp *http.Response, err error) (time.Duration, bool) {
	if ctx.Err() != nil {
		return 0, false
	}
	noReplay := ctx.Value(noReplayKey{}) != nil
	if err != nil {
		return 0, !noReplay && TransientError(err)
	}
	if noReplay && resp.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	isTransient := t.RetryStatus
	if isTransient == nil {
		isTransient = anyServerStatus
	}
	if !isTransient(resp.StatusCode) {
		return 0, false
	}
	return RetryAfter(resp.Header.Get("Retry-After"), time.Now()), true
}

// TransientError reports whether a transport error is worth another try:
// timeouts (including our own per-attempt deadline) and dropped connections.
// A refused connection is not: it almost always means a wrong address.
func TransientError(err error) bool {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.As(err, &ne) && ne.Timeout():
		return true
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	return false
}

// RetryAfter parses a Retry-After value (delta seconds or an HTTP date);
// zero when absent or unparseable.
func RetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		if d := at.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

func describe(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return resp.Status
}

func (t *Transport) logf(format string, args ...any) {
	if t.Logf != nil {
		t.Logf(format, args...)
		return
	}
	log.Printf("[DEBUG] "+format, args...) //nolint:gosec // our own request lines, for PACKER_LOG; credentials never reach them
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// cancelOnClose ends an attempt's deadline only when the caller is done
// reading the body, so the timeout covers the whole exchange.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
