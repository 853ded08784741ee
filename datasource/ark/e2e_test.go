package ark_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/timestamps"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/figures"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

func TestMain(m *testing.M) {
	code := figures.Main(m)
	packertest.Cleanup()
	os.Exit(code)
}

const (
	user     = "site-user"
	password = "E2E-ark-Pa55word"
)

// e2eWorld serves the fixture's paths, and grafana, with three guarded
// snapshots each.
func e2eWorld(t *testing.T) *pulpfake.Server {
	t.Helper()
	g := &pulpfake.Guard{Users: map[string]string{user: password}}
	paths := []string{"rocky/9.6/BaseOS/x86_64/os", "rocky/8.10/BaseOS/x86_64/os", "rocky/8.10/PowerTools/x86_64/os", "epel/9/Everything/x86_64", "grafana/oss/rpm"}
	return pulpfake.StartT(t, pulpfake.Options{}, g, paths, "20250102T030405", "20250601T120000", "20251106T211545")
}

// project lays out a template directory: the common build plus one
// scenario's data source.
func project(t *testing.T, scenario string) string {
	t.Helper()
	dir := t.TempDir()
	for src, dst := range map[string]string{"common.pkr.hcl": "common.pkr.hcl", scenario + ".pkr.hcl.txt": "data.pkr.hcl"} {
		data, err := os.ReadFile(filepath.Join("testdata", "e2e", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type outputs struct {
	Repos []struct {
		Name, RepoFile, RepoName, BaseURL, Path, Timestamp string
		GPGCheck                                           bool
	}
	Timestamps     map[string]string
	SnapshotID     string `json:"snapshot_id"`
	TimestampsYAML string `json:"timestamps_yaml"`
}

func readOutputs(t *testing.T, dir string) outputs {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The template's JSON uses the output names; map them onto the struct.
	data = []byte(strings.NewReplacer(`"repo_file"`, `"RepoFile"`, `"repo_name"`, `"RepoName"`, `"baseurl"`, `"BaseURL"`, `"gpgcheck"`, `"GPGCheck"`).Replace(string(data)))
	var o outputs
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func noSecret(t *testing.T, r packertest.Result) {
	t.Helper()
	if strings.Contains(r.Output(), password) {
		t.Fatalf("packer %v printed the password", r.Args)
	}
}

func TestE2ETimestampsFile(t *testing.T) {
	p := packertest.Setup(t)
	s := e2eWorld(t)
	dir := project(t, "file")
	fixture, _ := filepath.Abs("testdata/dnf_repo_timestamps.yml")
	env := []string{"ARK_USERNAME=" + user, "ARK_PASSWORD=" + password, "PACKER_LOG=1"}
	r := p.Run(t, dir, env, "build", "-var", "content_url="+s.ContentURL(), "-var", "timestamps_file="+fixture, ".")
	noSecret(t, r)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	o := readOutputs(t, dir)
	if len(o.Repos) != 2 || o.Repos[0].Name != "baseos" || o.Repos[1].Name != "epel" {
		t.Fatalf("repos: %+v", o.Repos)
	}
	b := o.Repos[0]
	if b.RepoFile != "rocky" || b.RepoName != "baseos" || !b.GPGCheck || b.Timestamp != "20251106T211545" ||
		b.BaseURL != s.ContentURL()+"/rocky/9.6/BaseOS/x86_64/os/20251106T211545" || b.Path != "rocky/9.6/BaseOS/x86_64/os" {
		t.Fatalf("baseos: %+v", b)
	}
	if o.Repos[1].GPGCheck {
		t.Fatalf("epel gpgcheck from the file lost: %+v", o.Repos[1])
	}
	if o.Timestamps["epel"] != "20251106T211545" || len(o.SnapshotID) != 12 {
		t.Fatalf("timestamps %v, snapshot_id %q", o.Timestamps, o.SnapshotID)
	}
	f, err := timestamps.Parse([]byte(o.TimestampsYAML))
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := f.Lookup("crb", "8.10"); !ok || e.PulpTimestamp != "20251106T211545" || e.RepoName != "powertools" {
		t.Fatalf("timestamps_yaml lost or did not resolve the 8.10 entries:\n%s", o.TimestampsYAML)
	}
	// Every request the build made carried the user's credentials.
	for _, req := range s.Requests() {
		if req.Username != user {
			t.Fatalf("request without credentials: %+v", req)
		}
	}
}

func TestE2ERepoBlocks(t *testing.T) {
	p := packertest.Setup(t)
	s := e2eWorld(t)
	dir := project(t, "blocks")
	r := p.Run(t, dir, nil, "build", "-var", "content_url="+s.ContentURL(), "-var", "password="+password, ".")
	noSecret(t, r)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	o := readOutputs(t, dir)
	if len(o.Repos) != 2 || o.Repos[1].Name != "grafana" || o.Repos[1].GPGCheck || o.Repos[1].RepoFile != "grafana" {
		t.Fatalf("repos: %+v", o.Repos)
	}
	if o.Timestamps["baseos"] != "20250601T120000" || o.Timestamps["grafana"] != "20250601T120000" {
		t.Fatalf("not_after chose %v", o.Timestamps)
	}
	f, err := timestamps.Parse([]byte(o.TimestampsYAML))
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := f.Lookup("grafana", "9.6"); !ok || e.PulpPath != "grafana/oss/rpm" || e.PulpTimestamp != "20250601T120000" {
		t.Fatalf("timestamps_yaml from blocks:\n%s", o.TimestampsYAML)
	}
}

func TestE2EMissingRepositoryFailsTheBuild(t *testing.T) {
	p := packertest.Setup(t)
	s := e2eWorld(t)
	dir := project(t, "missing")
	r := p.Run(t, dir, []string{"ARK_USERNAME=" + user, "ARK_PASSWORD=" + password}, "build", "-var", "content_url="+s.ContentURL(), ".")
	noSecret(t, r)
	want := `repo "baseos" (9.6): GET ` + s.ContentURL() + `/rocky/9.7/BaseOS/x86_64/os/: 404 Not Found`
	if r.ExitCode == 0 || !strings.Contains(r.Output(), want) {
		t.Fatalf("exit %d, want the error %q in:\n%s", r.ExitCode, want, r.Output())
	}
	if _, err := os.Stat(filepath.Join(dir, "out.json")); err == nil {
		t.Fatal("the build went on after the data source failed")
	}
}

func TestE2EValidateRejectsBadInputWithoutNetwork(t *testing.T) {
	p := packertest.Setup(t)
	s := e2eWorld(t)
	dir := project(t, "invalid")
	r := p.Run(t, dir, nil, "validate", "-var", "content_url="+s.ContentURL(), ".")
	if r.ExitCode == 0 || !strings.Contains(r.Output(), `mode: "newest" is not one of "latest", "pinned", "not_after"`) {
		t.Fatalf("exit %d:\n%s", r.ExitCode, r.Output())
	}
	if n := len(s.Requests()); n != 0 {
		t.Fatalf("validate made %d requests to the content app", n)
	}
	// A valid template validates without touching the network either.
	dir = project(t, "missing")
	if r := p.Run(t, dir, nil, "validate", "-var", "content_url="+s.ContentURL(), "."); r.ExitCode != 0 || len(s.Requests()) != 0 {
		t.Fatalf("exit %d, %d requests:\n%s", r.ExitCode, len(s.Requests()), r.Output())
	}
}
