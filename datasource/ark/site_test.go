package ark

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/pulp"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/sitepulp"
)

const (
	siteUser     = "site-admin"
	sitePassword = "Site-Pulp-Pa55-never-shown"
	siteTS       = "20250601T120000"
)

var sitePaths = []string{"rocky/9.6/BaseOS/x86_64/os", "epel/9/Everything/x86_64"}

// siteWorld is an Ark double with real (tiny) repositories behind the
// Ark credentials, and an empty site Pulp.
func siteWorld(t *testing.T, o sitepulp.Options) (*pulpfake.Server, *sitepulp.Server) {
	t.Helper()
	ark := pulpfake.New(pulpfake.Options{})
	for _, p := range sitePaths {
		ark.AddDistribution(pulpfake.Distribution{BasePath: p + "/" + siteTS,
			Files: sitepulp.RepoFiles(map[string][]byte{"pkg-" + strings.ReplaceAll(p, "/", "-") + ".rpm": []byte("payload of " + p)}),
			Guard: &pulpfake.Guard{Users: map[string]string{arkUser: arkPassword}}})
	}
	if err := ark.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ark.Close() })
	o.Username, o.Password = siteUser, sitePassword
	return ark, sitepulp.StartT(t, o)
}

func siteRaw(site *sitepulp.Server, extra map[string]interface{}) map[string]interface{} {
	sp := map[string]interface{}{"url": site.URL(), "username": siteUser, "password": sitePassword}
	for k, v := range extra {
		sp[k] = v
	}
	return map[string]interface{}{
		"os_version": "9.6",
		"repo": []map[string]interface{}{
			{"name": "baseos", "path": sitePaths[0], "repo_file": "rocky"},
			{"name": "epel", "path": sitePaths[1]},
		},
		"site_pulp": sp,
	}
}

// runSite resolves with the log captured, and fails the test if either
// password shows up in the log, the error or the outputs.
func runSite(t *testing.T, ark *pulpfake.Server, raw map[string]interface{}) (DatasourceOutput, string, error) {
	t.Helper()
	var buf bytes.Buffer
	var mu sync.Mutex
	log.SetOutput(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) }))
	defer log.SetOutput(io.Discard)
	out, _, err := run(t, ark, raw)
	mu.Lock()
	logs := buf.String()
	mu.Unlock()
	for _, text := range []string{logs, fmt.Sprint(err), fmt.Sprintf("%+v", out)} {
		for _, pw := range []string{arkPassword, sitePassword} {
			if strings.Contains(text, pw) {
				t.Fatalf("password leaked: %s", text)
			}
		}
	}
	return out, logs, err
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func get(t *testing.T, url, user, pass string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// The first run syncs, publishes and distributes each snapshot, and the
// outputs point at the site; the second finds everything served and
// starts no task at all.
func TestSitePulpSyncsThenReuses(t *testing.T) {
	ark, site := siteWorld(t, sitepulp.Options{})
	out, logs, err := runSite(t, ark, siteRaw(site, nil))
	if err != nil {
		t.Fatal(err)
	}
	// on_demand (the default): the sync fetched metadata only.
	if n := arkPackageGets(ark); n != 0 {
		t.Fatalf("an on_demand sync downloaded %d packages", n)
	}
	for _, r := range out.Repos {
		want := site.ContentURL() + "/" + r.Path + "/" + siteTS
		if r.BaseURL != want || r.SitePulp != SyncCreated || r.Credentials != "none" {
			t.Errorf("repo %s: %+v, want baseurl %s, created, no credentials", r.Name, r, want)
		}
		pkg := "pkg-" + strings.ReplaceAll(r.Path, "/", "-") + ".rpm"
		if code, body := get(t, r.BaseURL+"/Packages/"+pkg, "", ""); code != 200 || body != "payload of "+r.Path {
			t.Errorf("site serves %s/Packages/%s: %d %q", r.BaseURL, pkg, code, body)
		}
	}
	// ... and fetched each package from Ark, with the Ark user, when the
	// site was first asked for it.
	if n := arkPackageGets(ark); n != 2 {
		t.Fatalf("want the 2 packages fetched on demand, got %d", n)
	}
	if out.Synced["baseos"] != SyncCreated || out.Synced["epel"] != SyncCreated || len(out.Synced) != 2 {
		t.Fatalf("synced %v", out.Synced)
	}
	if !strings.Contains(logs, "Downloading Artifacts") && !strings.Contains(logs, "syncing repository") {
		t.Errorf("no progress in the log:\n%s", logs)
	}
	st := site.Stats()
	// Per snapshot: sync, publish, distribute.
	if st.Tasks != 6 || st.Distributions != 2 || st.Remotes != 2 {
		t.Fatalf("after the first run: %+v", st)
	}
	for _, task := range site.Tasks() {
		if task.State != "completed" {
			t.Fatalf("task %+v", task)
		}
	}

	out2, _, err := runSite(t, ark, siteRaw(site, nil))
	if err != nil {
		t.Fatal(err)
	}
	if st2 := site.Stats(); st2 != st {
		t.Fatalf("second run changed the site: %+v -> %+v", st, st2)
	}
	if out2.Synced["baseos"] != SyncReused || out2.Synced["epel"] != SyncReused || out2.Repos[0].BaseURL != out.Repos[0].BaseURL {
		t.Fatalf("second run: %+v", out2)
	}
}

// A set-up left half made (the remote and repository exist, the
// distribution was deleted) is completed without a new sync.
func TestSitePulpCompletesPartialSetUp(t *testing.T) {
	ark, site := siteWorld(t, sitepulp.Options{})
	if _, _, err := runSite(t, ark, siteRaw(site, nil)); err != nil {
		t.Fatal(err)
	}
	name := pulp.SiteSnapshot{Path: sitePaths[0], Timestamp: siteTS}.ObjectName()
	if !site.DeleteDistribution(name) {
		t.Fatalf("no distribution %s", name)
	}
	before := site.Stats()
	out, _, err := runSite(t, ark, siteRaw(site, nil))
	if err != nil {
		t.Fatal(err)
	}
	after := site.Stats()
	if after.Tasks != before.Tasks+1 || after.Distributions != 2 || after.Repositories != 2 || after.Publications != 2 {
		t.Fatalf("want exactly one new task (the distribution): %+v -> %+v", before, after)
	}
	if out.Synced["baseos"] != SyncCreated || out.Synced["epel"] != SyncReused {
		t.Fatalf("synced %v", out.Synced)
	}
}

// Only a remote exists (say a run died after creating it): the rest is
// made, the remote reused with fresh credentials.
func TestSitePulpReusesLoneRemote(t *testing.T) {
	ark, site := siteWorld(t, sitepulp.Options{})
	api, err := pulp.NewAPI(site.URL(), pulp.ClientOptions{Username: siteUser, Password: sitePassword})
	if err != nil {
		t.Fatal(err)
	}
	snap := pulp.SiteSnapshot{Path: sitePaths[0], Timestamp: siteTS}
	if _, err := api.CreateRemote(context.Background(), pulp.Remote{Name: snap.ObjectName(), URL: "http://192.0.2.1/stale/", Username: arkUser, Password: "stale"}); err != nil {
		t.Fatal(err)
	}
	out, _, err := runSite(t, ark, siteRaw(site, nil))
	if err != nil {
		t.Fatal(err)
	}
	if st := site.Stats(); st.Remotes != 2 || st.Distributions != 2 || out.Synced["baseos"] != SyncCreated {
		t.Fatalf("%+v %v", st, out.Synced)
	}
}

// Ark refusing the credentials during the sync: the task fails and the
// error names the repository and says the Ark credentials were refused.
func TestSitePulpUpstreamRefused(t *testing.T) {
	ark, site := siteWorld(t, sitepulp.Options{})
	// Resolution only lists (verify = false); the sync's first GET of
	// repomd.xml is refused.
	ark.SetFaults(pulpfake.Fault{PathPrefix: sitePaths[0] + "/" + siteTS + "/repodata/", Status: http.StatusUnauthorized})
	raw := siteRaw(site, nil)
	raw["verify"] = false
	_, _, err := runSite(t, ark, raw)
	name := pulp.SiteSnapshot{Path: sitePaths[0], Timestamp: siteTS}.ObjectName()
	if err == nil || !strings.Contains(err.Error(), `repo "baseos" (9.6)`) || !strings.Contains(err.Error(), "syncing repository "+name) ||
		!strings.Contains(err.Error(), "refused the Ark credentials") || !strings.Contains(err.Error(), "401, message='Unauthorized'") {
		t.Fatalf("want the refused Ark credentials named, got %v", err)
	}
	if strings.Contains(err.Error(), `repo "epel"`) {
		t.Fatalf("epel was fine: %v", err)
	}
}

// 5xx and 429 answers of the site API are retried.
func TestSitePulpRetriesServerErrors(t *testing.T) {
	ark, site := siteWorld(t, sitepulp.Options{})
	site.SetFaults(
		sitepulp.Fault{PathPrefix: "distributions/", Status: http.StatusServiceUnavailable, Times: 2},
		sitepulp.Fault{PathPrefix: "tasks/", Status: http.StatusTooManyRequests, RetryAfter: "0", Times: 2},
		sitepulp.Fault{PathPrefix: "repositories/", Method: "POST", Status: http.StatusBadGateway, Times: 1},
	)
	out, logs, err := runSite(t, ark, siteRaw(site, nil))
	if err != nil {
		t.Fatal(err)
	}
	if out.Synced["baseos"] != SyncCreated || !strings.Contains(logs, "retrying") {
		t.Fatalf("%v\n%s", out.Synced, logs)
	}
}

// A task that never finishes: the wait is bounded, the task cancelled,
// and the error says what to do.
func TestSitePulpTaskNeverFinishes(t *testing.T) {
	ark, site := siteWorld(t, sitepulp.Options{})
	site.SetHangTasks(true)
	_, _, err := runSite(t, ark, siteRaw(site, map[string]interface{}{"task_timeout": "1s"}))
	if err == nil || !strings.Contains(err.Error(), "did not finish in time within 1s") || !strings.Contains(err.Error(), "task_timeout") {
		t.Fatalf("want a bounded wait, got %v", err)
	}
	// PATCH answers "canceling"; the worker then ends the task on its own
	// time, as Pulp's does, so the final state is awaited (bounded).
	for _, task := range site.SettledTasks(10 * time.Second) {
		if task.State != "canceled" {
			t.Errorf("task %s left %s", task.Href, task.State)
		}
	}
}

// A site whose content is guarded: the outputs ask for credentials (the
// provisioner's repo_username/repo_password), and the check used them.
func TestSitePulpGuardedContent(t *testing.T) {
	ark, site := siteWorld(t, sitepulp.Options{ContentGuard: &pulpfake.Guard{Users: map[string]string{siteUser: sitePassword}}})
	out, _, err := runSite(t, ark, siteRaw(site, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Repos {
		if r.Credentials != "" || !strings.HasPrefix(r.BaseURL, site.ContentURL()) {
			t.Fatalf("guarded site: %+v", r)
		}
		if code, _ := get(t, r.BaseURL+"/repodata/repomd.xml", "", ""); code != http.StatusForbidden {
			t.Fatalf("site content not guarded: %d", code)
		}
	}
}

// Bad site_pulp settings fail at configure time, naming the field, with
// no network call (the URLs point nowhere).
func TestSitePulpConfigErrors(t *testing.T) {
	t.Setenv("SITE_PULP_USERNAME", "")
	t.Setenv("SITE_PULP_PASSWORD", "")
	for _, c := range []struct {
		sp   map[string]interface{}
		want string
	}{
		{map[string]interface{}{"username": "u", "password": "Site-Pw-9x"}, "site_pulp.url: required"},
		{map[string]interface{}{"url": "http://192.0.2.1:8080/pulp/api/v3/", "username": "u", "password": "Site-Pw-9x"}, `site_pulp.url: "http://192.0.2.1:8080/pulp/api/v3/" must be the base before /pulp/api/v3/, for example "http://192.0.2.1:8080"`},
		{map[string]interface{}{"url": "http://192.0.2.1:8080"}, "site_pulp.username/site_pulp.password: the site Pulp's API needs credentials"},
		{map[string]interface{}{"url": "http://192.0.2.1:8080", "username": "u", "password": "Site-Pw-9x", "policy": "streamed"}, `site_pulp.policy: "streamed" is not one of "on_demand", "immediate"`},
		{map[string]interface{}{"url": "ftp://192.0.2.1", "username": "u", "password": "Site-Pw-9x"}, "site_pulp.url:"},
		{map[string]interface{}{"url": "http://192.0.2.1", "username": "u", "password": "Site-Pw-9x", "content_url": "http://u:Site-Pw-9x@192.0.2.1/c"}, "site_pulp.content_url:"},
		{map[string]interface{}{"url": "http://192.0.2.1", "username": "u", "password": "Site-Pw-9x", "ca_file": "/nonexistent.pem"}, "site_pulp.ca_file:"},
	} {
		_, err := configure(map[string]interface{}{"os_version": "9.6", "content_url": "http://192.0.2.2/pulp/content",
			"repo": []map[string]interface{}{{"name": "a", "path": "a"}}, "site_pulp": c.sp})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: want %q, got %v", c.sp, c.want, err)
		}
	}
	t.Setenv("SITE_PULP_USERNAME", "envuser")
	t.Setenv("SITE_PULP_PASSWORD", "envpass")
	d, err := configure(map[string]interface{}{"os_version": "9.6", "content_url": "http://192.0.2.2/pulp/content",
		"repo": []map[string]interface{}{{"name": "a", "path": "a"}}, "site_pulp": map[string]interface{}{"url": "http://192.0.2.1:8080/"}})
	if err != nil {
		t.Fatal(err)
	}
	sp := d.config.SitePulp
	if sp.Username != "envuser" || sp.Password != "envpass" || sp.ContentURL != "http://192.0.2.1:8080/pulp/content" || sp.Policy != "on_demand" {
		t.Fatalf("defaults: %+v", sp)
	}
}

// A distribution someone made at the base path without a publication is
// completed (pointed at the new publication), not duplicated.
func TestSitePulpCompletesEmptyDistribution(t *testing.T) {
	ark, site := siteWorld(t, sitepulp.Options{})
	api, err := pulp.NewAPI(site.URL(), pulp.ClientOptions{Username: siteUser, Password: sitePassword})
	if err != nil {
		t.Fatal(err)
	}
	snap := pulp.SiteSnapshot{Path: sitePaths[0], Timestamp: siteTS}
	ctx := context.Background()
	task, err := api.CreateDistribution(ctx, pulp.Distribution{Name: "made-by-hand", BasePath: snap.BasePath()})
	if err == nil {
		_, err = api.Wait(ctx, task)
	}
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runSite(t, ark, siteRaw(site, nil))
	if err != nil {
		t.Fatal(err)
	}
	d, err := api.DistributionByBasePath(ctx, snap.BasePath())
	if err != nil || d == nil || d.Name != "made-by-hand" || d.Publication == "" {
		t.Fatalf("distribution %+v %v", d, err)
	}
	if st := site.Stats(); st.Distributions != 2 || out.Synced["baseos"] != SyncCreated {
		t.Fatalf("%+v %v", st, out.Synced)
	}
	if code, _ := get(t, out.Repos[0].BaseURL+"/repodata/repomd.xml", "", ""); code != 200 {
		t.Fatalf("site does not serve %s: %d", out.Repos[0].BaseURL, code)
	}
}

// arkPackageGets counts the successful package downloads from the Ark
// double, made as the Ark user.
func arkPackageGets(ark *pulpfake.Server) int {
	n := 0
	for _, r := range ark.Requests() {
		if strings.Contains(r.Path, "/Packages/") && r.Status == http.StatusOK && r.Username == arkUser {
			n++
		}
	}
	return n
}

// policy = "immediate": the sync itself downloads every package.
func TestSitePulpImmediateDownloadsDuringSync(t *testing.T) {
	ark, site := siteWorld(t, sitepulp.Options{})
	out, _, err := runSite(t, ark, siteRaw(site, map[string]interface{}{"policy": "immediate"}))
	if err != nil {
		t.Fatal(err)
	}
	if n := arkPackageGets(ark); n != 2 || out.Synced["baseos"] != SyncCreated {
		t.Fatalf("want both packages downloaded by the sync, got %d (%v)", n, out.Synced)
	}
}
