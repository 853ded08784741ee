package ark_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/figures"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/secretaudit"
)

// Awkward credentials: their URL, JSON and base64 forms differ from the
// raw text, so an audit of the raw text alone would miss a leak.
const (
	echoArkUser  = "ark-echo"
	echoArkPW    = `Ark-Echo/pw+"q"&x=1?#%é`
	echoSiteUser = "site-admin"
	echoSitePW   = `Site-Echo pw/+:@"é`
)

const snapshot = "20251106T211545"

// arkContent is a content app serving one snapshot of baseos to the Ark
// credentials, and 403 to anything else.
func arkContent(t *testing.T) *httptest.Server {
	t.Helper()
	base := "/pulp/content/rocky/9.6/BaseOS/x86_64/os/"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != echoArkUser || p != echoArkPW {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		switch r.URL.Path {
		case base:
			w.Write([]byte(`<html><body><pre><a href="../">../</a>` + "\n" + `<a href="` + snapshot + `/">` + snapshot + "/</a>\n</pre></body></html>\n"))
		case base + snapshot + "/repodata/repomd.xml":
			w.Write([]byte("<repomd/>"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestE2ESecretsEchoedByServersAreRedacted runs `packer build` with
// PACKER_LOG=1 against a site Pulp whose 400 answers echo what it was
// sent: the password, the Authorization header, the Ark credentials in a
// remote's URL. Neither the UI nor PACKER_LOG may carry any form of any
// credential (secretaudit), and <sensitive> shows where they were.
func TestE2ESecretsEchoedByServersAreRedacted(t *testing.T) {
	p := packertest.Setup(t)
	content := arkContent(t)
	forms := secretaudit.Forms(
		secretaudit.Credential{Name: "Ark password", User: echoArkUser, Secret: echoArkPW},
		secretaudit.Credential{Name: "site Pulp password", User: echoSiteUser, Secret: echoSitePW},
	)
	for _, tc := range []struct {
		name string
		echo func(r *http.Request) string
	}{
		{"the password", func(*http.Request) string { return "refused the credentials " + echoSitePW }},
		{"the Basic header", func(r *http.Request) string { return "refused Authorization: " + r.Header.Get("Authorization") }},
		{"the Ark credentials in a URL and a query", func(*http.Request) string {
			u := url.URL{Scheme: "https", User: url.UserPassword(echoArkUser, echoArkPW), Host: "ark.example", Path: "/pulp/content/"}
			return "remote " + u.String() + " refused; try ?password=" + url.QueryEscape(echoArkPW)
		}},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			var echoed atomic.Int32
			site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				echoed.Add(1)
				body, _ := json.Marshal(map[string]string{"detail": tc.echo(r)})
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				w.Write(body)
			}))
			defer site.Close()
			dir := project(t, "sitepulp")
			log := filepath.Join(t.TempDir(), "packer.log")
			env := []string{"ARK_USERNAME=" + echoArkUser, "ARK_PASSWORD=" + echoArkPW,
				"SITE_PULP_USERNAME=" + echoSiteUser, "SITE_PULP_PASSWORD=" + echoSitePW,
				"PACKER_LOG=1", "PACKER_LOG_PATH=" + log}
			r := p.Run(t, dir, env, "build", "-var", "content_url="+content.URL+"/pulp/content", "-var", "site_url="+site.URL, ".")
			logText, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if r.ExitCode == 0 || echoed.Load() == 0 || !strings.Contains(r.Output(), "is not a usable Pulp API") {
				t.Fatalf("exit %d, %d site Pulp requests: the build did not fail on the echoing site Pulp:\n%s", r.ExitCode, echoed.Load(), r.Output())
			}
			for what, data := range map[string]string{"the UI": r.Output(), "PACKER_LOG": string(logText)} {
				if found := secretaudit.Find([]byte(data), forms); len(found) > 0 {
					t.Errorf("%s carries %s", what, strings.Join(found, ", "))
				}
				if n := strings.Count(data, redact.Marker); n == 0 {
					t.Errorf("%s has no %s where the echo was:\n%s", what, redact.Marker, data)
				} else {
					t.Logf("%s: %d bytes, %d %s, no form of either credential", what, len(data), n, redact.Marker)
				}
			}
		})
	}
}

// TestE2EInterruptStopsTheDataSource: a content app answering 503 with
// Retry-After: 100000 holds the data source in its retry wait; Ctrl-C
// (SIGINT to packer's process group) must end packer within 2 s.
func TestE2EInterruptStopsTheDataSource(t *testing.T) {
	p := packertest.Setup(t)
	var hits atomic.Int32
	first := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hits.Add(1) == 1 {
			close(first)
		}
		w.Header().Set("Retry-After", "100000")
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	dir := project(t, "one")
	env := []string{"ARK_USERNAME=" + user, "ARK_PASSWORD=" + password, "PACKER_LOG=1", "PACKER_LOG_PATH=" + filepath.Join(t.TempDir(), "packer.log")}
	proc := p.Start(t, dir, env, "build", "-var", "content_url="+srv.URL+"/pulp/content", ".")
	select {
	case <-first:
	case <-time.After(time.Minute):
		t.Fatalf("the data source made no request:\n%s", proc.Output())
	}
	time.Sleep(500 * time.Millisecond) // into the Retry-After wait
	sent := time.Now()
	if err := proc.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := proc.Wait(t, 5*time.Minute)
	took := time.Since(sent)
	t.Logf("packer exited %s after SIGINT (exit %d, %d requests)", took.Round(time.Millisecond), r.ExitCode, hits.Load())
	if took > 2*time.Second {
		t.Errorf("packer took %s to exit after SIGINT, want under 2 s", took.Round(time.Millisecond))
	}
	if r.ExitCode == 0 || !strings.Contains(r.Output(), "interrupted by SIGINT (Ctrl-C): stopped resolving snapshots") {
		t.Errorf("exit %d, want the interrupt named:\n%s", r.ExitCode, r.Output())
	}
	if hits.Load() != 1 {
		t.Errorf("%d requests: the retry went on after SIGINT", hits.Load())
	}
	figures.Record(t, "dsinterrupt", []string{"Data source waiting on", "SIGINT to exit (goal under 2 s)", "exit code", "requests made"},
		"503 with Retry-After: 100000", figures.Dur(took), fmt.Sprint(r.ExitCode), fmt.Sprint(hits.Load()))
}
