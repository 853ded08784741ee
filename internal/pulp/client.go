package pulp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/fetch"
	"github.com/stackhpc/packer-plugin-fatimage/internal/httpretry"
)

// ClientOptions configures a Client.
type ClientOptions struct {
	// Username and Password are sent as HTTP Basic auth, pre-emptively,
	// since a Pulp content guard answers 403 rather than challenging.
	Username, Password string
	// CAFile adds a PEM bundle to the system roots.
	CAFile string
	// InsecureSkipVerify turns off TLS certificate checks.
	InsecureSkipVerify bool
	// Timeout bounds each HTTP attempt; retries get their own.
	Timeout time.Duration
	// Attempts is how many times a transient failure is tried in all.
	Attempts int
	// MaxConns sizes the idle connection pool per host.
	MaxConns int
	// Logf receives retry and warning messages; nil logs to the standard log.
	Logf func(format string, args ...any)
}

// Client talks to a Pulp content app.
type Client struct {
	http               *http.Client
	username, password string
}

// NewClient builds a Client. It reads CAFile but makes no network call.
func NewClient(o ClientOptions) (*Client, error) {
	hc, err := newHTTPClient(o, nil)
	if err != nil {
		return nil, err
	}
	return &Client{http: hc, username: o.Username, password: o.Password}, nil
}

// newHTTPClient is the retrying, TLS-configured client both the content
// Client and the API client use; retryStatus nil retries 429 and every 5xx.
func newHTTPClient(o ClientOptions, retryStatus func(int) bool) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = max(o.MaxConns, 2)
	if o.CAFile != "" || o.InsecureSkipVerify {
		tlsConf := &tls.Config{InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // explicitly requested by the user
		if o.CAFile != "" {
			pem, err := os.ReadFile(o.CAFile)
			if err != nil {
				return nil, fmt.Errorf("ca_file: %w", err)
			}
			pool, err := x509.SystemCertPool()
			if err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("ca_file %s: no PEM certificate found", o.CAFile)
			}
			tlsConf.RootCAs = pool
		}
		tr.TLSClientConfig = tlsConf
	}
	return &http.Client{
		Transport: &httpretry.Transport{
			Base:           tr,
			Attempts:       o.Attempts,
			AttemptTimeout: o.Timeout,
			RetryStatus:    retryStatus,
			Logf:           o.Logf,
		},
		CheckRedirect: fetch.SameOriginCredentials,
	}, nil
}

// StatusError is an unexpected HTTP answer. Its text names the method, the
// URL (which never carries credentials) and the status.
type StatusError struct {
	Method, URL string
	StatusCode  int
	Status      string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Method, e.URL, e.Status)
}

// get fetches url and hands the 200 body to read; any other status is a
// *StatusError.
func (c *Client) get(ctx context.Context, url string, read func(io.Reader) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if c.username != "" || c.password != "" {
		req.SetBasicAuth(c.username, c.password)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &StatusError{Method: req.Method, URL: url, StatusCode: resp.StatusCode, Status: statusText(resp)}
	}
	if read == nil {
		_, err = io.Copy(io.Discard, resp.Body)
	} else {
		err = read(resp.Body)
	}
	if err != nil {
		return fmt.Errorf("%s %s: reading answer: %w", req.Method, url, err)
	}
	return nil
}

func statusText(resp *http.Response) string {
	if resp.Status != "" {
		return resp.Status
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
}

// ListURL is the listing URL of a repository path below a content URL.
func ListURL(contentURL, path string) string {
	return strings.TrimSuffix(contentURL, "/") + "/" + strings.Trim(path, "/") + "/"
}

// SnapshotURL is the base URL of one snapshot, as dnf's baseurl takes it.
func SnapshotURL(contentURL, path, timestamp string) string {
	return ListURL(contentURL, path) + timestamp
}

// Snapshots lists the snapshot names below a repository path, oldest first.
func (c *Client) Snapshots(ctx context.Context, contentURL, path string) ([]string, error) {
	var names []string
	err := c.get(ctx, ListURL(contentURL, path), func(r io.Reader) error {
		var err error
		names, err = ParseListing(r)
		return err
	})
	return names, err
}

// Check proves a snapshot is a readable RPM repository for these
// credentials: its repodata/repomd.xml answers 200. GET rather than HEAD,
// because object-storage redirects are signed for GET.
func (c *Client) Check(ctx context.Context, contentURL, path, timestamp string) error {
	return c.get(ctx, SnapshotURL(contentURL, path, timestamp)+"/repodata/repomd.xml", nil)
}

// credentialHosts serve their content only to authenticated users.
var credentialHosts = map[string]bool{"ark.stackhpc.com": true}

// NeedsCredentials reports whether rawURL is on a host known to refuse
// anonymous access (StackHPC's Ark), so a missing username or password
// can be reported at validate time instead of as a 401 mid-build.
func NeedsCredentials(rawURL string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && credentialHosts[strings.ToLower(u.Hostname())]
}
