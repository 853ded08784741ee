package openstack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// debugTransport is -debug's log of every OpenStack HTTP request, as the
// official builder prints it ("[DEBUG] Request GET <url> 200", and the body
// of an error response), with credentials and tokens redacted: the URL's
// user info and secret-looking query values, any JSON value under a key
// naming a password, secret or token, and the template's own secrets
// wherever they appear. Headers (X-Auth-Token, X-Subject-Token) are never
// printed.
type debugTransport struct {
	ui      packersdk.Ui
	base    http.RoundTripper
	secrets []string
}

// maxDebugBody bounds an error body printed, so a proxy's HTML page does
// not flood the output.
const maxDebugBody = 4096

func (d *debugTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := d.base.RoundTrip(req)
	where := d.redact(redactURL(req.URL))
	if err != nil {
		d.ui.Say(fmt.Sprintf("[DEBUG] Request %s %s failed after %s: %s", req.Method, where, time.Since(start).Round(time.Millisecond), d.redact(err.Error())))
		return resp, err
	}
	d.ui.Say(fmt.Sprintf("[DEBUG] Request %s %s %d (%s)", req.Method, where, resp.StatusCode, time.Since(start).Round(time.Millisecond)))
	if resp.StatusCode >= 400 && resp.Body != nil {
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxDebugBody+1))
		rest := resp.Body
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), rest), rest}
		if rerr == nil {
			shown := body
			if len(shown) > maxDebugBody {
				shown = shown[:maxDebugBody]
			}
			d.ui.Say(fmt.Sprintf("[DEBUG] Response error: %s", d.redact(redactJSON(shown))))
		}
	}
	return resp, err
}

// redact replaces the template's secrets wherever they appear.
func (d *debugTransport) redact(s string) string {
	for _, sec := range d.secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "<redacted>")
		}
	}
	return s
}

// secretKey reports whether a JSON or query key names a credential.
func secretKey(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"password", "secret", "token", "credential", "passwd"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	q := c.Query()
	changed := false
	for k := range q {
		if secretKey(k) {
			q.Set(k, "redacted")
			changed = true
		}
	}
	if changed {
		c.RawQuery = q.Encode()
	}
	return c.String()
}

// redactJSON blanks the values under credential keys of a JSON body; a
// body that is not JSON is returned as it is (the secrets filter of
// redact still applies).
func redactJSON(b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return string(b)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(redactValue(v)); err != nil {
		return string(b)
	}
	return strings.TrimSpace(out.String())
}

func redactValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if secretKey(k) && val != nil {
				// Also a whole object, e.g. Keystone's {"token": {"id": ...}}.
				t[k] = "<redacted>"
				continue
			}
			t[k] = redactValue(val)
		}
	case []any:
		for i := range t {
			t[i] = redactValue(t[i])
		}
	}
	return v
}
