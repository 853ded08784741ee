package ark

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/stackhpc/packer-plugin-fatimage/internal/timestamps"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"

	"github.com/stackhpc/packer-plugin-fatimage/internal/pulp"
)

const (
	arkUser     = "site-user"
	arkPassword = "Ark-Pa55word-never-shown"
)

var fixturePaths = []string{"rocky/9.6/BaseOS/x86_64/os", "rocky/8.10/BaseOS/x86_64/os", "rocky/8.10/PowerTools/x86_64/os", "epel/9/Everything/x86_64"}

// arkWorld serves every fixture path with three guarded snapshots.
func arkWorld(t testing.TB) *pulpfake.Server {
	t.Helper()
	g := &pulpfake.Guard{Users: map[string]string{arkUser: arkPassword}}
	return pulpfake.StartT(t, pulpfake.Options{}, g, append(fixturePaths, "grafana/oss/rpm"), "20250102T030405", "20250601T120000", "20251106T211545")
}

func run(t *testing.T, s *pulpfake.Server, raw map[string]interface{}) (DatasourceOutput, []string, error) {
	t.Helper()
	raw["content_url"] = s.ContentURL()
	raw["username"] = arkUser
	if _, ok := raw["password"]; !ok {
		raw["password"] = arkPassword
	}
	d, err := configure(raw)
	if err != nil {
		t.Fatalf("configure: %v", err)
	}
	var warnings []string
	out, err := Resolve(context.Background(), &d.config, func(w string) { warnings = append(warnings, w) })
	for _, text := range append(warnings, fmt.Sprint(err), fmt.Sprintf("%+v", out)) {
		if strings.Contains(text, arkPassword) {
			t.Fatalf("password leaked: %s", text)
		}
	}
	return out, warnings, err
}

func TestResolveTimestampsFileLatest(t *testing.T) {
	s := arkWorld(t)
	out, warnings, err := run(t, s, map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture, "mode": "latest"})
	if err != nil || len(warnings) != 0 {
		t.Fatal(err, warnings)
	}
	want := []Repo{
		{Name: "baseos", RepoFile: "rocky", RepoName: "baseos", BaseURL: s.ContentURL() + "/rocky/9.6/BaseOS/x86_64/os/20251106T211545",
			Path: "rocky/9.6/BaseOS/x86_64/os", Timestamp: "20251106T211545", OSVersion: "9.6", GPGCheck: true},
		{Name: "epel", RepoFile: "epel", RepoName: "epel", BaseURL: s.ContentURL() + "/epel/9/Everything/x86_64/20251106T211545",
			Path: "epel/9/Everything/x86_64", Timestamp: "20251106T211545", OSVersion: "9.6", GPGCheck: false},
	}
	if fmt.Sprint(out.Repos) != fmt.Sprint(want) {
		t.Fatalf("repos\n got %+v\nwant %+v", out.Repos, want)
	}
	if len(out.Timestamps) != 2 || out.Timestamps["baseos"] != "20251106T211545" || out.Timestamps["epel"] != "20251106T211545" {
		t.Fatalf("timestamps %v", out.Timestamps)
	}
	// The YAML holds every OS version of the file, each freshly resolved.
	f, err := timestamps.Parse([]byte(out.TimestampsYAML))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range f.Entries() {
		if e.PulpTimestamp != "20251106T211545" {
			t.Errorf("timestamps_yaml entry %s not updated: %+v", e.Key(), e)
		}
	}
	if len(f.Entries()) != 4 || !strings.Contains(out.TimestampsYAML, "repo_name: powertools") {
		t.Fatalf("timestamps_yaml lost entries:\n%s", out.TimestampsYAML)
	}
	if len(out.SnapshotID) != 12 {
		t.Fatalf("snapshot_id %q", out.SnapshotID)
	}
}

func TestRepoBlocksOverrideAndPin(t *testing.T) {
	s := arkWorld(t)
	for _, pin := range []string{"rocky/8.10/BaseOS/x86_64/os/20250614T013846", "epel/9/Everything/x86_64/20260816T212205"} {
		s.AddDistribution(pulpfake.Distribution{BasePath: pin})
	}
	out, _, err := run(t, s, map[string]interface{}{
		"os_version": "9.6", "timestamps_file": fixture, "mode": "pinned",
		"repo": []map[string]interface{}{
			{"name": "baseos", "timestamp": "20250601T120000", "repo_name": "BaseOS"},
			{"name": "grafana", "path": "grafana/oss/rpm/", "timestamp": "20250102T030405", "gpgcheck": false},
		},
		"skip": []string{"crb"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Repo{}
	for _, r := range out.Repos {
		got[r.Name] = r
	}
	if len(out.Repos) != 3 || out.Repos[0].Name != "baseos" || out.Repos[1].Name != "epel" || out.Repos[2].Name != "grafana" {
		t.Fatalf("repos %+v", out.Repos)
	}
	if b := got["baseos"]; b.Timestamp != "20250601T120000" || b.RepoName != "BaseOS" || b.RepoFile != "rocky" {
		t.Fatalf("baseos override: %+v", b)
	}
	if g := got["grafana"]; g.Path != "grafana/oss/rpm" || g.RepoFile != "grafana" || g.GPGCheck || g.BaseURL != s.ContentURL()+"/grafana/oss/rpm/20250102T030405" {
		t.Fatalf("grafana block: %+v", g)
	}
	if got["epel"].Timestamp != "20260816T212205" {
		t.Fatalf("epel pin from file not kept: %+v", got["epel"])
	}
}

func TestPinnedChecksEveryPinExists(t *testing.T) {
	s := pulpfake.StartT(t, pulpfake.Options{}, nil, nil)
	raw := func() map[string]interface{} {
		return map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture, "mode": "pinned", "only": []string{"epel", "baseos"}}
	}
	s.AddDistribution(pulpfake.Distribution{BasePath: "rocky/9.6/BaseOS/x86_64/os/20251106T211545"})
	s.AddDistribution(pulpfake.Distribution{BasePath: "rocky/8.10/BaseOS/x86_64/os/20250614T013846"})
	_, _, err := run(t, s, raw())
	if err == nil || strings.Contains(err.Error(), `"baseos"`) || !strings.Contains(err.Error(),
		`repo "epel" (9): pinned snapshot 20260816T212205: GET `+s.ContentURL()+`/epel/9/Everything/x86_64/20260816T212205/repodata/repomd.xml: 404 Not Found`) {
		t.Fatalf("want exactly the missing epel pin reported, got %v", err)
	}
	s.AddDistribution(pulpfake.Distribution{BasePath: "epel/9/Everything/x86_64/20260816T212205"})
	out, _, err := run(t, s, raw())
	if err != nil || out.Timestamps["epel"] != "20260816T212205" || out.Timestamps["baseos"] != "20251106T211545" {
		t.Fatalf("%v %v", out.Timestamps, err)
	}
}

func TestErrorsNameRepoVersionURLAndStatus(t *testing.T) {
	s := arkWorld(t)
	s.RemoveDistribution("epel/9/Everything/x86_64/20250102T030405")
	s.RemoveDistribution("epel/9/Everything/x86_64/20250601T120000")
	s.RemoveDistribution("epel/9/Everything/x86_64/20251106T211545")
	out, _, err := run(t, s, map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture, "mode": "latest",
		"repo": []map[string]interface{}{{"name": "baseos", "path": "rocky/9.7/BaseOS/x86_64/os"}}})
	if err == nil {
		t.Fatalf("want an error, got %+v", out)
	}
	for _, want := range []string{
		`repo "baseos" (9.6): GET ` + s.ContentURL() + `/rocky/9.7/BaseOS/x86_64/os/: 404 Not Found`,
		`repo "epel" (9): GET ` + s.ContentURL() + `/epel/9/Everything/x86_64/: 404 Not Found`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "crb") {
		t.Errorf("repos that resolved are reported as failures: %v", err)
	}
}

func TestWrongPasswordFailsClearly(t *testing.T) {
	s := arkWorld(t)
	_, _, err := run(t, s, map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture, "mode": "latest", "only": []string{"baseos"}, "password": "not-the-password"})
	if err == nil || !strings.Contains(err.Error(), `repo "baseos" (9.6): GET `+s.ContentURL()+`/rocky/9.6/BaseOS/x86_64/os/: no usable snapshot (20251106T211545 answered 403 Forbidden`) {
		t.Fatalf("got %v", err)
	}
	if strings.Contains(err.Error(), "not-the-password") {
		t.Fatal("password in error")
	}
}

func TestWarningsNameThePassedOverSnapshot(t *testing.T) {
	s := arkWorld(t)
	s.AddDistribution(pulpfake.Distribution{BasePath: "rocky/9.6/BaseOS/x86_64/os/20260101T000000", Guard: &pulpfake.Guard{Users: map[string]string{"dev": "dev"}}})
	out, warnings, err := run(t, s, map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture, "mode": "latest", "only": []string{"baseos"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Timestamps["baseos"] != "20251106T211545" || len(warnings) != 1 ||
		!strings.HasPrefix(warnings[0], `repo "baseos" (9.6): passing over snapshot 20260101T000000: GET `) || !strings.HasSuffix(warnings[0], "403 Forbidden") {
		t.Fatalf("%v %q", out.Timestamps, warnings)
	}
}

func TestNotAfterAndSnapshotID(t *testing.T) {
	s := arkWorld(t)
	raw := func() map[string]interface{} {
		return map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture, "mode": "not_after", "not_after": "2025-07-01T00:00:00Z"}
	}
	a, _, err := run(t, s, raw())
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := run(t, s, raw())
	if a.Timestamps["baseos"] != "20250601T120000" || a.Timestamps["epel"] != "20250601T120000" {
		t.Fatalf("not_after chose %v", a.Timestamps)
	}
	if a.SnapshotID != b.SnapshotID {
		t.Fatalf("snapshot_id not stable: %s %s", a.SnapshotID, b.SnapshotID)
	}
	latest, _, _ := run(t, s, map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture, "mode": "latest"})
	if latest.SnapshotID == a.SnapshotID {
		t.Fatal("snapshot_id ignores the timestamps")
	}
}

func TestExecuteGivesTemplatesAListOfObjects(t *testing.T) {
	s := arkWorld(t)
	d, err := configure(map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture, "mode": "latest", "content_url": s.ContentURL(),
		"username": arkUser, "password": arkPassword})
	if err != nil {
		t.Fatal(err)
	}
	v, err := d.Execute()
	if err != nil {
		t.Fatal(err)
	}
	repos := v.GetAttr("repos")
	if !repos.Type().IsListType() || repos.LengthInt() != 2 {
		t.Fatalf("repos is %s", repos.Type().FriendlyName())
	}
	first := repos.Index(cty.NumberIntVal(0))
	if first.GetAttr("name").AsString() != "baseos" || first.GetAttr("gpgcheck").True() != true || first.GetAttr("os_version").AsString() != "9.6" {
		t.Fatalf("first repo %#v", first)
	}
	if v.GetAttr("timestamps").Index(cty.StringVal("epel")).AsString() != "20251106T211545" {
		t.Fatalf("timestamps %#v", v.GetAttr("timestamps"))
	}
}

func TestResolveErrorFirstLineNamesTheCause(t *testing.T) {
	refused := func(repo string) error {
		return fmt.Errorf("repo %q (9.6): GET x: no usable snapshot (1 answered 403 Forbidden); %w", repo, pulp.ErrCredentialsRefused)
	}
	first := func(err error) string { return strings.SplitN(err.Error(), "\n", 2)[0] }
	err := resolveError([]error{refused("baseos"), refused("epel")}, 8)
	if got := first(err); !strings.HasPrefix(got, "2 of 8 repositories: the server refused these credentials") {
		t.Errorf("all refused: first line %q", got)
	}
	if !strings.Contains(err.Error(), "\n* repo \"epel\"") {
		t.Errorf("each repository's error should follow:\n%v", err)
	}
	err = resolveError([]error{errors.New("repo \"crb\" (9.6): GET x: 404 Not Found"), refused("epel")}, 8)
	if got := first(err); got != "2 of 8 repositories could not be resolved, the first: repo \"crb\" (9.6): GET x: 404 Not Found" {
		t.Errorf("mixed: first line %q", got)
	}
	if one := errors.New("only"); resolveError([]error{one}, 8) != one {
		t.Error("a single error should be returned as it is")
	}
}

// With pins and no mode, the pins are what is resolved, though newer
// snapshots exist: the appliance's snapshots, each checked to exist.
func TestPinsAreTheDefault(t *testing.T) {
	s := arkWorld(t)
	for _, d := range []string{"rocky/9.6/BaseOS/x86_64/os/20260101T000000", "rocky/8.10/BaseOS/x86_64/os/20250614T013846",
		"rocky/8.10/PowerTools/x86_64/os/20260816T213221", "epel/9/Everything/x86_64/20260816T212205"} {
		s.AddDistribution(pulpfake.Distribution{BasePath: d})
	}
	out, _, err := run(t, s, map[string]interface{}{"os_version": "9.6", "timestamps_file": fixture})
	if err != nil {
		t.Fatal(err)
	}
	if out.Timestamps["baseos"] != "20251106T211545" || out.Timestamps["epel"] != "20260816T212205" {
		t.Fatalf("want the file's pins, got %v", out.Timestamps)
	}
}
