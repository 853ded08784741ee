// Package fetch is the plugin's one way of fetching a file on the host
// (binary_source or content_source = "host"): into a content-addressed
// cache under PACKER_CACHE_DIR (files named by their sha256, renamed there
// only once checked, so a cached file is known good), through httpretry's
// retries (a body cut short is fetched again too), with a progress line
// every few seconds, sizes and time bounded, a cancelled context honoured,
// and credentials kept to the origin they were meant for.
package fetch

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/httpretry"
)

// Defaults used when an Options field is zero.
const (
	DefaultMaxSize        = 64 << 30 // no artifact the plugin fetches comes near
	DefaultAttemptTimeout = 30 * time.Minute
	DefaultInterval       = 5 * time.Second
	// DefaultAttempts is how often a download whose body broke off is
	// started again (httpretry retries each request's own failures).
	DefaultAttempts = 3
)

// CacheDir is the plugin's content-addressed cache, PACKER_CACHE_DIR's
// fatimage/sha256 (other caches, git mirrors and OCI archives, sit next
// to it).
func CacheDir() (string, error) { return packersdk.CachePath("fatimage", "sha256") }

// Options configure a Fetcher; every field may be left zero.
type Options struct {
	Dir string // the cache; "" is CacheDir()
	// Base sends the requests (tests); nil is a clone of
	// http.DefaultTransport.
	Base               http.RoundTripper
	InsecureSkipVerify bool // a registry the template marked insecure
	Attempts           int
	// AttemptTimeout bounds one request, its body included.
	AttemptTimeout time.Duration
	MaxSize        int64 // bytes
	// Progress is told "downloading <url>" and, for a download that takes
	// longer than Interval, one line of progress every Interval at most.
	Progress func(line string)
	Interval time.Duration
	// Retry is the transport's retry policy; its Base is set from Base.
	Retry httpretry.Transport
}

// Fetcher fetches into its cache.
type Fetcher struct {
	opts   Options
	client *http.Client
}

// New returns a Fetcher with o's settings, defaults filled in.
func New(o Options) *Fetcher {
	o.Attempts = orDefault(o.Attempts, DefaultAttempts)
	o.AttemptTimeout = orDefault(o.AttemptTimeout, DefaultAttemptTimeout)
	o.MaxSize = orDefault(o.MaxSize, DefaultMaxSize)
	o.Interval = orDefault(o.Interval, DefaultInterval)
	base := o.Base
	if base == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.ResponseHeaderTimeout = 2 * time.Minute
		if o.InsecureSkipVerify {
			tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the template marked the registry insecure
		}
		base = tr
	}
	rt := o.Retry
	rt.Base = base
	rt.AttemptTimeout = o.AttemptTimeout
	return &Fetcher{opts: o, client: &http.Client{Transport: &rt, CheckRedirect: SameOriginCredentials}}
}

// Client is the Fetcher's HTTP client, for the requests that are not
// downloads into the cache (a registry's manifests and tokens): retried,
// bounded and credential-safe as the downloads are.
func (f *Fetcher) Client() *http.Client { return f.client }

// Item is one file to fetch.
type Item struct {
	What string // names it in errors, e.g. "downloads[0]"
	URL  string
	// SHA256 is the file's sha256 (hex, any case); "" (an explicit
	// opt-out of the check) fetches afresh and caches the file under the
	// sha256 it turns out to have.
	SHA256 string
	Size   int64 // the exact size when known (a blob's descriptor), else 0
	// Header goes with the request; its credentials never leave the URL's
	// origin (see SameOriginCredentials).
	Header http.Header
}

// Result is a fetched file.
type Result struct {
	Path   string // in the cache
	SHA256 string
	Cached bool // it was there: no request made
}

// MismatchError is a file whose sha256 is not the one asked for.
type MismatchError struct{ What, Want, Got, URL string }

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s: sha256 mismatch: want %s, got %s (%s)", e.What, e.Want, e.Got, e.URL)
}

// StatusError is a response other than 200 OK.
type StatusError struct {
	What, URL string
	Response  *http.Response // body closed
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: GET %s: %s", e.What, e.URL, e.Response.Status)
}

// Get returns the cached file with it.SHA256, fetching it first when the
// cache lacks it.
func (f *Fetcher) Get(ctx context.Context, it Item) (Result, error) {
	dir := f.opts.Dir
	if dir == "" {
		d, err := CacheDir()
		if err != nil {
			return Result{}, fmt.Errorf("%s: cache: %w", it.What, err)
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, fmt.Errorf("%s: cache: %w", it.What, err)
	}
	want := strings.ToLower(it.SHA256)
	if want != "" {
		cached := filepath.Join(dir, want)
		if _, err := os.Stat(cached); err == nil {
			return Result{Path: cached, SHA256: want, Cached: true}, nil
		}
	}
	f.progress("downloading " + redacted(it.URL))
	for attempt := 1; ; attempt++ {
		r, err := f.download(ctx, it, dir)
		if err == nil || attempt >= f.opts.Attempts || !brokenOff(ctx, err) {
			return r, err
		}
		f.progress(fmt.Sprintf("%v; downloading again (attempt %d of %d)", err, attempt+1, f.opts.Attempts))
	}
}

// download fetches it once into a temporary file in dir, checks it and
// renames it to its sha256.
func (f *Fetcher) download(ctx context.Context, it Item, dir string) (Result, error) {
	resp, err := f.request(ctx, it)
	if err != nil {
		return Result{}, err
	}
	defer resp.Body.Close()
	tmp, err := os.CreateTemp(dir, ".download-*")
	if err != nil {
		return Result{}, fmt.Errorf("%s: cache: %w", it.What, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	limit := f.opts.MaxSize
	if it.Size > 0 {
		limit = it.Size
	}
	h := sha256.New()
	pr := &progressReader{r: io.LimitReader(resp.Body, limit+1), total: resp.ContentLength, name: it.What, every: f.opts.Interval, say: f.progress, last: time.Now()}
	n, err := io.Copy(io.MultiWriter(tmp, h), pr)
	if err != nil {
		return Result{}, &readError{fmt.Errorf("%s: reading %s: %w", it.What, redacted(it.URL), err)}
	}
	if n > limit {
		return Result{}, fmt.Errorf("%s: %s is larger than %d bytes", it.What, redacted(it.URL), limit)
	}
	if it.Size > 0 && n != it.Size {
		return Result{}, fmt.Errorf("%s: %s has %d bytes, want %d", it.What, redacted(it.URL), n, it.Size)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if want := strings.ToLower(it.SHA256); want != "" && got != want {
		return Result{}, &MismatchError{What: it.What, Want: want, Got: got, URL: redacted(it.URL)}
	}
	if err := tmp.Close(); err != nil {
		return Result{}, fmt.Errorf("%s: cache: %w", it.What, err)
	}
	cached := filepath.Join(dir, got)
	if err := os.Rename(tmp.Name(), cached); err != nil {
		return Result{}, fmt.Errorf("%s: cache: %w", it.What, err)
	}
	return Result{Path: cached, SHA256: got}, nil
}

// request sends the GET and returns a 200 response whose declared size
// is within bounds.
func (f *Fetcher) request(ctx context.Context, it Item) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, it.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", it.What, err)
	}
	for k, v := range it.Header {
		req.Header[k] = v
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", it.What, err)
	}
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close() // nothing read: its error says nothing
		return nil, &StatusError{What: it.What, URL: redacted(it.URL), Response: resp}
	}
	limit := f.opts.MaxSize
	if it.Size > 0 {
		limit = it.Size
	}
	if resp.ContentLength > limit {
		_ = resp.Body.Close() // nothing read: its error says nothing
		return nil, fmt.Errorf("%s: %s is %d bytes, more than %d", it.What, redacted(it.URL), resp.ContentLength, limit)
	}
	return resp, nil
}

// readError is a body that broke off.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// brokenOff reports whether err is a body cut short while the caller
// still waits: worth downloading again.
func brokenOff(ctx context.Context, err error) bool {
	var re *readError
	return ctx.Err() == nil && errors.As(err, &re)
}

func (f *Fetcher) progress(line string) {
	if f.opts.Progress != nil {
		f.opts.Progress(line)
	}
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
