package timestamps

import (
	"os"
	"strings"
	"testing"
)

func load(t *testing.T) *File {
	t.Helper()
	data, err := os.ReadFile("testdata/dnf_repo_timestamps.yml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestLookupExactThenMajor(t *testing.T) {
	f := load(t)
	for _, tc := range []struct{ repo, os, wantVersion string }{
		{"baseos", "9.6", "9.6"},
		{"baseos", "8.10", "8.10"},
		{"epel", "9.6", "9"},
		{"epel", "9", "9"},
	} {
		e, ok := f.Lookup(tc.repo, tc.os)
		if !ok || e.Version != tc.wantVersion {
			t.Errorf("Lookup(%s, %s) = %+v, %v", tc.repo, tc.os, e, ok)
		}
	}
	for _, miss := range [][2]string{{"baseos", "9.5"}, {"crb", "9.6"}, {"epel", "8.10"}, {"nope", "9.6"}} {
		if e, ok := f.Lookup(miss[0], miss[1]); ok {
			t.Errorf("Lookup(%s, %s) found %+v", miss[0], miss[1], e)
		}
	}
	e, _ := f.Lookup("epel", "9.6")
	if e.GPGCheck == nil || *e.GPGCheck || e.RepoFile != "epel" || e.PulpTimestamp != "20260816T212205" {
		t.Fatalf("epel entry decoded wrongly: %+v", e)
	}
	e, _ = f.Lookup("crb", "8.10")
	if e.RepoName != "powertools" || e.GPGCheck != nil {
		t.Fatalf("crb entry decoded wrongly: %+v", e)
	}
	if got := strings.Join(f.Repos(), ","); got != "baseos,crb,epel" {
		t.Fatalf("repos %s", got)
	}
}

func TestRoundTripKeepsWhatItDoesNotChange(t *testing.T) {
	f := load(t)
	e, _ := f.Lookup("epel", "9.6")
	e.PulpTimestamp = "20270101T000000"
	f.Put(e)
	yes := true
	f.Put(Entry{Repo: "OpenHPC", Version: "9.6", PulpPath: "OpenHPC/3/EL_9", PulpTimestamp: "20250101T000000", RepoFile: "OpenHPC", GPGCheck: &yes})
	f.Put(Entry{Repo: "baseos", Version: "10", PulpPath: "rocky/10/BaseOS/x86_64/os", PulpTimestamp: "20250101T000000", RepoFile: "rocky"})
	out, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, want := range []string{"# Pins for the appliance's Pulp snapshots.", "# bumped by CI", "dnf_repos_other_setting: keep-me",
		"pulp_timestamp: 20270101T000000", "repo_name: powertools", "gpgcheck: false"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lost %q:\n%s", want, text)
		}
	}
	g, err := Parse(out)
	if err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, text)
	}
	if len(g.Entries()) != 6 {
		t.Fatalf("want 6 entries, got %+v", g.Entries())
	}
	for _, k := range [][3]string{{"epel", "9.6", "20270101T000000"}, {"OpenHPC", "9.6", "20250101T000000"}, {"baseos", "10", "20250101T000000"}, {"baseos", "9.6", "20251106T211545"}} {
		e, ok := g.Lookup(k[0], k[1])
		if !ok || e.PulpTimestamp != k[2] {
			t.Errorf("after round trip %s %s = %+v", k[0], k[1], e)
		}
	}
	// A version key written by us must stay a string ('10', not 10).
	if !strings.Contains(text, "'10':") {
		t.Errorf("version key not quoted:\n%s", text)
	}
}

func TestNewFileMarshalsInApplianceLayout(t *testing.T) {
	f := New()
	f.Put(Entry{Repo: "baseos", Version: "9.6", PulpPath: "rocky/9.6/BaseOS/x86_64/os", PulpTimestamp: "20251106T211545", RepoFile: "rocky"})
	out, _ := f.Marshal()
	want := "dnf_repos_default:\n  baseos:\n    '9.6':\n      pulp_path: rocky/9.6/BaseOS/x86_64/os\n      pulp_timestamp: 20251106T211545\n      repo_file: rocky\n"
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a: [", "not valid YAML"},
		{"- 1\n", `expected a mapping with a "dnf_repos_default" key`},
		{"other: 1\n", `no "dnf_repos_default" key`},
		{"dnf_repos_default: [1]\n", "line 1: dnf_repos_default must be a mapping"},
		{"dnf_repos_default:\n  baseos: 3\n", `repo "baseos" must map OS versions to entries`},
		{"dnf_repos_default:\n  baseos:\n    '9.6':\n      repo_file: rocky\n", `line 4: repo "baseos" (9.6): pulp_path is missing`},
		{"dnf_repos_default:\n  baseos:\n    '9.6':\n      pulp_path: x\n", `repo "baseos" (9.6): repo_file is missing`},
		{"dnf_repos_default:\n  baseos:\n    '9.6':\n      pulp_path: x\n      repo_file: y\n      gpgcheck: maybe\n", `repo "baseos" (9.6): gpgcheck: "maybe" is not a boolean`},
		{"dnf_repos_default:\n  baseos:\n    '9.6':\n      pulp_path: [x]\n      repo_file: y\n", `pulp_path must be a single value`},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q): got %v, want %q", tc.in, err, tc.want)
		}
	}
}
