package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"strings"
	"testing"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// awkward carries what makes encodings differ from the raw text: URL and
// JSON specials, a quote, a backslash, non-ASCII.
const (
	user     = "ark-user"
	awkward  = `Pa55 w/rd+"q"\é&x=1?#%:@`
	tokenLit = "gAAAAABtoken-Th1s-1s-s3cret"
)

// derived spells awkward in each form a message can carry it, by name.
func derived(t *testing.T) map[string]string {
	t.Helper()
	j, _ := json.Marshal(awkward)
	auth, _ := json.Marshal(map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + awkward))})
	req, _ := http.NewRequest(http.MethodGet, "http://pulp.site/", nil)
	req.SetBasicAuth(user, awkward)
	return map[string]string{
		"raw":                awkward,
		"query-escaped":      url.QueryEscape(awkward),
		"path-escaped":       url.PathEscape(awkward),
		"in a URL":           (&url.URL{Scheme: "https", User: url.UserPassword(user, awkward), Host: "ark", Path: "/x"}).String(),
		"in a query":         "https://ark/x?" + url.Values{"password": {awkward}}.Encode(),
		"JSON":               string(j),
		"Go %q":              fmt.Sprintf("%q", awkward),
		"Basic header":       req.Header.Get("Authorization"),
		"registry auth JSON": string(auth),
		"base64url Basic":    base64.URLEncoding.EncodeToString([]byte(user + ":" + awkward)),
		"bearer token":       "Authorization: Bearer " + tokenLit,
		"token in JSON":      `{"token":{"id":"` + tokenLit + `"}}`,
	}
}

// leaks names what of s is still readable.
func leaks(s string) []string {
	var out []string
	for _, f := range append(BasicForms(user, awkward), Forms(tokenLit)...) {
		if strings.Contains(s, f) {
			out = append(out, f)
		}
	}
	return out
}

func TestEveryDerivedFormIsRedacted(t *testing.T) {
	var s Set
	s.AddBasic(user, awkward)
	s.Add(tokenLit)
	for name, msg := range derived(t) {
		got := s.String("before " + msg + " after")
		if l := leaks(got); len(l) > 0 || !strings.Contains(got, Marker) {
			t.Errorf("%s: %q redacted to %q (still readable: %q)", name, msg, got, l)
		}
		if !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
			t.Errorf("%s: redaction ate the text around the secret: %q", name, got)
		}
	}
}

// The audit (leaks) must see what redaction hides: each derived message
// carries at least one form it knows.
func TestFormsFindEveryDerivedSpelling(t *testing.T) {
	for name, msg := range derived(t) {
		if len(leaks(msg)) == 0 {
			t.Errorf("%s: %q carries no known form", name, msg)
		}
	}
}

func TestOtherTextIsLeftAlone(t *testing.T) {
	var s Set
	s.AddBasic(user, awkward)
	for _, msg := range []string{"", "GET https://ark/x: 403 Forbidden", "user " + user + " refused", "Pa55 w/rd"} {
		if got := s.String(msg); got != msg {
			t.Errorf("%q became %q", msg, got)
		}
	}
	var empty Set
	empty.Add("")
	empty.AddBasic(user, "")
	if got := empty.String("ark-user:"); got != "ark-user:" {
		t.Errorf("an empty secret redacted %q", got)
	}
}

// A secret inside another's form: the longer form goes whole.
func TestLongestFormFirst(t *testing.T) {
	var s Set
	s.Add("abc", "xabcx")
	if got := s.String("1 xabcx 2 abc 3"); got != "1 "+Marker+" 2 "+Marker+" 3" {
		t.Fatalf("got %q", got)
	}
}

func TestLogSecretFilterIsApplied(t *testing.T) {
	packersdk.LogSecretFilter.Set("winrm-Adm1n-pw")
	if got := String("password winrm-Adm1n-pw"); got != "password "+Marker {
		t.Fatalf("got %q", got)
	}
}

func TestWriterFiltersTheLog(t *testing.T) {
	AddBasic("site", "Site-Pulp-Pw/1")
	var buf bytes.Buffer
	l := log.New(Writer(&buf), "", 0)
	l.Printf("GET http://pulp/status/: 400 Bad Request: refused the credentials %s (%s)", "Site-Pulp-Pw/1", base64.StdEncoding.EncodeToString([]byte("site:Site-Pulp-Pw/1")))
	if got := buf.String(); strings.Contains(got, "Site-Pulp-Pw") || strings.Count(got, Marker) != 2 {
		t.Fatalf("log line %q", got)
	}
	n, err := Writer(io.Discard).Write([]byte("Site-Pulp-Pw/1"))
	if n != len("Site-Pulp-Pw/1") || err != nil {
		t.Fatalf("Write reported %d, %v: callers count what they passed in", n, err)
	}
}

func TestError(t *testing.T) {
	Add("err-S3cret")
	if Error(nil) != nil {
		t.Fatal("nil error became non-nil")
	}
	plain := errors.New("nothing secret")
	if Error(plain) != plain {
		t.Fatal("an error without secrets was replaced")
	}
	if got := Error(fmt.Errorf("wrapped: %w", errors.New("detail err-S3cret"))).Error(); got != "wrapped: detail "+Marker {
		t.Fatalf("got %q", got)
	}
}

// recUI records what reaches the wrapped Ui.
type recUI struct{ lines []string }

func (r *recUI) Ask(q string) (string, error)            { r.lines = append(r.lines, "ask "+q); return "", nil }
func (r *recUI) Askf(q string, a ...any) (string, error) { return r.Ask(fmt.Sprintf(q, a...)) }
func (r *recUI) Say(m string)                            { r.lines = append(r.lines, "say "+m) }
func (r *recUI) Sayf(m string, a ...any)                 { r.Say(fmt.Sprintf(m, a...)) }
func (r *recUI) Message(m string)                        { r.Say(m) }
func (r *recUI) Error(m string)                          { r.lines = append(r.lines, "error "+m) }
func (r *recUI) Errorf(m string, a ...any)               { r.Error(fmt.Sprintf(m, a...)) }
func (r *recUI) Machine(k string, a ...string) {
	r.lines = append(r.lines, "machine "+k+" "+strings.Join(a, ","))
}
func (r *recUI) TrackProgress(src string, _, _ int64, s io.ReadCloser) io.ReadCloser {
	r.lines = append(r.lines, "progress "+src)
	return s
}

func TestUiRedactsEveryMethod(t *testing.T) {
	const pw = "Ui-S3cret-pw"
	AddBasic("u", pw)
	rec := &recUI{}
	ui := UI(rec)
	if UI(ui) != ui {
		t.Fatal("wrapping twice")
	}
	basic := base64.StdEncoding.EncodeToString([]byte("u:" + pw))
	ui.Say("say " + pw)
	ui.Sayf("sayf %s", basic)
	ui.Message("message " + url.QueryEscape(pw)) //nolint:staticcheck // the deprecated method is still part of packersdk.Ui and must be redacted too
	ui.Error("error " + pw)
	ui.Errorf("errorf %q", pw)
	_, _ = ui.Ask("ask " + pw)
	_, _ = ui.Askf("askf %s", pw)
	ui.Machine("artifact", "0", "https://u:"+pw+"@host/")
	ui.TrackProgress("https://u:"+pw+"@host/file", 0, 1, io.NopCloser(strings.NewReader("")))
	if len(rec.lines) != 9 {
		t.Fatalf("%d of 9 calls reached the Ui: %q", len(rec.lines), rec.lines)
	}
	for _, l := range rec.lines {
		if strings.Contains(l, pw) || strings.Contains(l, basic) || !strings.Contains(l, Marker) {
			t.Errorf("the Ui got %q", l)
		}
	}
}
