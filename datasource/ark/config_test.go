package ark

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/timestamps"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

const fixture = "testdata/dnf_repo_timestamps.yml"

func configure(raw map[string]interface{}) (*Datasource, error) {
	d := &Datasource{}
	return d, d.Configure(raw)
}

// Ark refuses anonymous access: say so at validate time, not as a 401.
func TestConfigureArkNeedsCredentials(t *testing.T) {
	t.Setenv("ARK_USERNAME", "u")
	t.Setenv("ARK_PASSWORD", "")
	_, err := configure(map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture})
	want := "username/password: https://ark.stackhpc.com/pulp/content needs credentials; set username and password (or ARK_USERNAME and ARK_PASSWORD)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %s", err, want)
	}
	if _, err := configure(map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture, "content_url": "https://pulp.site.example/pulp/content"}); err != nil {
		t.Fatalf("a site's Pulp may be anonymous: %v", err)
	}
}

func TestConfigureRejectsBadInput(t *testing.T) {
	t.Setenv("ARK_USERNAME", "u") // Ark itself needs credentials
	t.Setenv("ARK_PASSWORD", "Ark-Pw-7q")
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte("dnf_repos_default:\n  baseos: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badTS := filepath.Join(dir, "badts.yml")
	if err := os.WriteFile(badTS, []byte("dnf_repos_default:\n  baseos:\n    '9.6':\n      pulp_path: p\n      repo_file: rocky\n      pulp_timestamp: 2025-01-01\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badPath := filepath.Join(dir, "badpath.yml")
	if err := os.WriteFile(badPath, []byte("dnf_repos_default:\n  baseos:\n    '9.6':\n      pulp_path: ../admin\n      repo_file: rocky\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture}
	with := func(base map[string]interface{}, kv ...interface{}) map[string]interface{} {
		m := map[string]interface{}{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	block := func(kv ...interface{}) []map[string]interface{} { return []map[string]interface{}{with(nil, kv...)} }

	for _, tc := range []struct {
		name string
		raw  map[string]interface{}
		want string
	}{
		{"no os_version", map[string]interface{}{"timestamps_file": fixture}, `os_version: required, for example "9.6"`},
		{"odd os_version", with(file, "os_version", "rocky 9"), `os_version: "rocky 9" is not a version`},
		{"no repositories", map[string]interface{}{"os_version": "9.6"}, "no repositories: set timestamps_file or appliance_dir, or add repo blocks"},
		{"appliance_dir and timestamps_file", with(file, "appliance_dir", dir), "timestamps_file: not with appliance_dir, whose environments/common/inventory/group_vars/all/dnf_repo_timestamps.yml is the timestamps file; give one of them"},
		{"appliance_dir without pins", map[string]interface{}{"os_version": "9.6", "appliance_dir": dir}, "appliance_dir: " + dir + " has no environments/common/inventory/group_vars/all/dnf_repo_timestamps.yml: give the appliance checkout"},
		{"pinned by default, a block without timestamp", with(file, "repo", block("name", "grafana", "path", "grafana/oss/rpm")), `repo "grafana" (9.6): mode is "pinned", the default with a timestamps file, but no timestamp is given: set timestamp in its repo block or pulp_timestamp in the timestamps file, or mode = "latest" for the newest snapshots`},
		{"unknown mode", with(file, "mode", "newest"), `mode: "newest" is not one of "latest", "pinned", "not_after"`},
		{"not_after without time", with(file, "mode", "not_after"), `not_after: required with mode = "not_after"`},
		{"malformed not_after", with(file, "mode", "not_after", "not_after", "2025-13-01"), `not_after: "2025-13-01" is neither a timestamp like 20250101T000000 nor an RFC 3339 time`},
		{"not_after with another mode", with(file, "not_after", "20250101T000000"), `not_after: only used with mode = "not_after", but mode is "pinned"`},
		{"missing timestamps file", with(file, "timestamps_file", filepath.Join(dir, "none.yml")), "timestamps_file: open " + filepath.Join(dir, "none.yml") + ": no such file or directory"},
		{"malformed timestamps file", with(file, "timestamps_file", bad), "timestamps_file " + bad + ": not valid YAML"},
		{"malformed timestamp in file", with(file, "timestamps_file", badTS), `repo "baseos" (9.6): pulp_timestamp: "2025-01-01" is not a snapshot timestamp`},
		{"os_version nobody has", with(file, "os_version", "10.1"), `os_version: no repository has an entry for "10.1" or "10"`},
		{"block without name", with(file, "repo", block("path", "x")), "repo[0].name: required"},
		{"block twice", with(file, "repo", []map[string]interface{}{{"name": "a", "path": "a"}, {"name": "a", "path": "b"}}), `repo[1].name: repository "a" is given twice`},
		{"malformed block timestamp", with(file, "repo", block("name", "baseos", "timestamp", "latest")), `repo[0].timestamp: "latest" is not a snapshot timestamp`},
		{"new block without path", with(file, "repo", block("name", "grafana")), `repo[0].path: required, as the timestamps file has no "grafana" entry for 9.6`},
		{"only names an unknown repo", with(file, "only", []string{"baseos", "nope"}), `only: no repository named "nope" (known: baseos, crb, epel)`},
		{"skip names an unknown repo", with(file, "skip", []string{"nope"}), `skip: no repository named "nope"`},
		{"everything skipped", with(file, "skip", []string{"baseos", "crb", "epel"}), "only/skip: every repository is left out"},
		{"pinned without timestamp", map[string]interface{}{"os_version": "9.6", "mode": "pinned", "repo": block("name", "x", "path", "x/y")}, `repo "x" (9.6): mode is "pinned", but no timestamp is given`},
		{"credentials in content_url", with(file, "content_url", "https://u:p@ark.example/pulp/content"), `content_url: "https://u:xxxxx@ark.example/pulp/content" must not contain credentials; use username and password`},
		{"relative content_url", with(file, "content_url", "ark/pulp"), `content_url: "ark/pulp" must be an absolute http:// or https:// URL`},
		{"content_url with a query", with(file, "content_url", "https://ark/pulp?x=1"), `content_url: "https://ark/pulp?x=1" must not have a query or fragment`},
		{"block content_url", with(file, "repo", block("name", "baseos", "content_url", "ftp://mirror/")), `repo[0].content_url: "ftp://mirror/" must be an absolute`},
		{"negative concurrency", with(file, "concurrency", -1), "concurrency: must be at least 1, got -1"},
		{"huge concurrency", with(file, "concurrency", 100000000), "concurrency: 100000000 is more than 64, the most repositories resolved at once"},
		{"path escaping the content URL", with(file, "repo", block("name", "baseos", "path", "../../../../admin?x=1#frag")), `repo[0].path: "../../../../admin?x=1#frag" contains "?": a repository path has no query, fragment, escapes or backslashes`},
		{"path with ..", with(file, "repo", block("name", "baseos", "path", "rocky/../../admin")), `repo[0].path: "rocky/../../admin" has a ".." segment`},
		{"path with .", with(file, "repo", block("name", "baseos", "path", "./rocky/9.6")), `repo[0].path: "./rocky/9.6" has a "." segment`},
		{"absolute path", with(file, "repo", block("name", "baseos", "path", "/rocky/9.6/BaseOS/x86_64/os")), `repo[0].path: "/rocky/9.6/BaseOS/x86_64/os" is absolute`},
		{"path with a fragment", with(file, "repo", block("name", "baseos", "path", "rocky/9.6#x")), `repo[0].path: "rocky/9.6#x" contains "#"`},
		{"path with an escape", with(file, "repo", block("name", "baseos", "path", "rocky/%2e%2e/admin")), `repo[0].path: "rocky/%2e%2e/admin" contains "%"`},
		{"path with a control character", with(file, "repo", block("name", "baseos", "path", "rocky/9.6\r\nHost: evil")), `repo[0].path: "rocky/9.6\r\nHost: evil" contains a control or space character`},
		{"path with an empty segment", with(file, "repo", block("name", "baseos", "path", "rocky//9.6")), `repo[0].path: "rocky//9.6" has an empty segment`},
		{"path junk in the file", with(file, "timestamps_file", badPath), `repo "baseos" (9.6): pulp_path: "../admin" has a ".." segment`},
		{"negative timeout", with(file, "timeout", "-5s"), "timeout: must be positive, got -5s"},
		{"malformed timeout", with(file, "timeout", "soon"), "timeout"},
		{"missing ca_file", with(file, "ca_file", filepath.Join(dir, "ca.pem")), "ca_file: stat " + filepath.Join(dir, "ca.pem") + ": no such file or directory"},
		{"unknown option", with(file, "modee", "latest"), "modee"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := configure(tc.raw)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestConfigureCollectsEveryProblem(t *testing.T) {
	_, err := configure(map[string]interface{}{"mode": "newest", "concurrency": -2, "content_url": "nope"})
	for _, want := range []string{"os_version: required", "mode: ", "concurrency: ", "content_url: "} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}

func TestConfigureMakesNoNetworkCall(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	d, err := configure(map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture, "content_url": srv.URL + "/pulp/content", "mode": "pinned"})
	if err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 0 {
		t.Fatalf("Configure made %d requests", hits.Load())
	}
	if len(d.config.plan) != 4 || d.config.Timeout != DefaultTimeout || d.config.Concurrency != DefaultConcurrency || !*d.config.Verify {
		t.Fatalf("defaults or plan wrong: %+v", d.config)
	}
}

func TestCredentialsDefaultFromEnvironment(t *testing.T) {
	t.Setenv("ARK_USERNAME", "env-user")
	t.Setenv("ARK_PASSWORD", "env-password")
	d, err := configure(map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture})
	if err != nil || d.config.Username != "env-user" || d.config.Password != "env-password" {
		t.Fatalf("%v %+v", err, d.config)
	}
	d, _ = configure(map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture, "username": "u", "password": "Ark-Pw-7q"})
	if d.config.Username != "u" || d.config.Password != "Ark-Pw-7q" {
		t.Fatalf("explicit credentials lost: %+v", d.config)
	}
}

// The appliance builds from its pins: a timestamps file (or a checkout's)
// means mode pinned unless the template says otherwise; repo blocks alone
// still take the newest.
func TestModeDefaultsToPinnedWithPins(t *testing.T) {
	t.Setenv("ARK_USERNAME", "u")
	t.Setenv("ARK_PASSWORD", "Ark-Pw-7q")
	for _, tc := range []struct {
		raw  map[string]interface{}
		want string
	}{
		{map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture}, "pinned"},
		{map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture, "mode": "latest"}, "latest"},
		{map[string]interface{}{"os_version": "9.6", "repo": []map[string]interface{}{{"name": "x", "path": "x/y"}}}, "latest"},
	} {
		d, err := configure(tc.raw)
		if err != nil || string(d.config.mode) != tc.want {
			t.Errorf("%v: mode %q, %v; want %q", tc.raw, d.config.mode, err, tc.want)
		}
	}
}

// appliance_dir reads the real checkout's pins, where the appliance keeps
// them, and pins every entry of os_version to them.
func TestApplianceDirReadsTheCheckoutsPins(t *testing.T) {
	checkout := appliancesite.Checkout(t)
	t.Setenv("ARK_USERNAME", "u")
	t.Setenv("ARK_PASSWORD", "Ark-Pw-7q")
	d, err := configure(map[string]interface{}{"os_version": "9.8", "appliance_dir": checkout})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(checkout, "environments", "common", "inventory", "group_vars", "all", "dnf_repo_timestamps.yml")
	if d.config.TimestampsFile != want || d.config.mode != "pinned" {
		t.Fatalf("timestamps file %q mode %q, want %q pinned", d.config.TimestampsFile, d.config.mode, want)
	}
	data, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	f, err := timestamps.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	forOS := 0
	for _, task := range d.config.plan {
		if e, ok := f.Lookup(task.entry.Repo, "9.8"); task.forOS && (!ok || e.PulpTimestamp != task.entry.PulpTimestamp || task.entry.PulpTimestamp == "") {
			t.Errorf("%s: planned pin %q, the checkout's %q", task.entry.Key(), task.entry.PulpTimestamp, e.PulpTimestamp)
		}
		if task.forOS {
			forOS++
		}
	}
	if forOS < 10 {
		t.Fatalf("only %d repositories for 9.8 planned from the checkout", forOS)
	}
}
