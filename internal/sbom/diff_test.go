package sbom

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDiffEveryKind(t *testing.T) {
	prev, cur := fullImage(), fullImage()
	cur.RPMs = []RPM{
		{Name: "bash", EVR: EVR{"0", "5.1.8", "9.el9"}, Arch: "x86_64"},                  // same
		{Name: "librados2", EVR: EVR{"1", "19.0", "1.el9"}, Arch: "x86_64"},              // epoch 2 -> 1: down
		{Name: "kernel-core", EVR: EVR{"0", "5.14.0", "570.58.1.el9_6"}, Arch: "x86_64"}, // kept
		{Name: "kernel-core", EVR: EVR{"0", "5.14.0", "611.5.1.el9_7"}, Arch: "x86_64"},  // second kernel
		{Name: "gpg-pubkey", EVR: EVR{"0", "350d275d", "6279464b"}, Arch: "(none)"},      // same
		{Name: "mlnx-tools", EVR: EVR{"0", "24.10", "0.2410068~rc1"}, Arch: "x86_64"},    // tilde: older
		{Name: "slurm-ohpc", EVR: EVR{"0", "24.05.5", "1.1"}, Arch: "x86_64"},            // added
	}
	prev.RPMs = append(prev.RPMs, RPM{Name: "slurm-ohpc", EVR: EVR{"0", "23.11.10", "1.1"}, Arch: "x86_64"})
	prev.RPMs[3] = RPM{Name: "gpg-pubkey", EVR: EVR{"0", "350d275d", "6279464b"}, Arch: "(none)"}
	cur.RPMs = append(cur.RPMs, RPM{Name: "nano", EVR: EVR{"0", "5.6.1", "7.el9"}, Arch: "x86_64"})
	cur.RPMs = cur.RPMs[:len(cur.RPMs)-1]                                                                        // nano: not there after all
	prev.RPMs = append(prev.RPMs, RPM{Name: "vim-minimal", EVR: EVR{"2", "8.2.2637", "21.el9"}, Arch: "x86_64"}) // removed
	cur.Snapshots["epel"] = "20251120T000000"
	cur.Containers[0].Digest = "sha256:" + strings.Repeat("99", 32)
	cur.Python["/opt/venv"] = []PyDist{{Name: "requests", Version: "2.32.4"}, {Name: "urllib3", Version: "2.2.1"}}
	cur.Git["/opt/ood/apps/jupyter"] = Git{Repo: "x", Commit: strings.Repeat("2b", 20)}
	cur.Downloads = nil
	cur.Users = cur.Users[:1]
	cur.SourceImage.ID = "c2e7"

	r := Diff(prev, cur, "prev.cdx.json")
	p := r.Packages
	want := Packages{
		Added:      []Change{{Name: "kernel-core.x86_64", To: "5.14.0-611.5.1.el9_7"}},
		Removed:    []Change{{Name: "kernel-core.x86_64", From: "5.14.0-570.58.1.el9_6"}, {Name: "vim-minimal.x86_64", From: "2:8.2.2637-21.el9"}},
		Upgraded:   []Change{{Name: "slurm-ohpc.x86_64", From: "23.11.10-1.1", To: "24.05.5-1.1"}},
		Downgraded: []Change{{Name: "librados2.x86_64", From: "2:18.2.4-1.el9", To: "1:19.0-1.el9"}, {Name: "mlnx-tools.x86_64", From: "24.10-0.2410068", To: "24.10-0.2410068~rc1"}},
	}
	// kernel-core was one version before, two now: compared by version,
	// so the kept one is neither added nor removed
	want.Removed = want.Removed[1:]
	if !reflect.DeepEqual(p, want) {
		t.Errorf("packages:\n got %+v\nwant %+v", p, want)
	}
	checks := map[string][]Change{
		"kernels":    {{Name: "5.14.0-611.5.1.el9_7.x86_64", To: "installed"}},
		"snapshots":  {{Name: "epel", From: "20251106T211545", To: "20251120T000000"}},
		"containers": {{Name: "registry.example.org:5000/ohpc/slurm:24.05 (podman)", From: "sha256:" + strings.Repeat("cd", 32), To: "sha256:" + strings.Repeat("99", 32)}},
		"python":     {{Name: "/opt/venv requests", From: "2.32.3", To: "2.32.4"}},
		"git":        {{Name: "/opt/ood/apps/jupyter", From: strings.Repeat("1a", 20), To: strings.Repeat("2b", 20)}},
		"downloads":  {{Name: "/usr/local/bin/tool", From: strings.Repeat("ef", 32)}},
		"users":      {{Name: "slurm", From: "uid 202 gid 202 /var/lib/slurm /sbin/nologin"}},
		"source":     {{Name: "source image", From: "Rocky-9-GenericCloud-Base-9.6 b1d6", To: "Rocky-9-GenericCloud-Base-9.6 c2e7"}},
		"binaries":   {},
	}
	got := map[string][]Change{"kernels": r.Kernels, "snapshots": r.Snapshots, "containers": r.Containers, "python": r.Python,
		"git": r.Git, "downloads": r.Downloads, "users": r.Users, "source": r.SourceImage, "binaries": r.Binaries}
	for k, w := range checks {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s:\n got %+v\nwant %+v", k, got[k], w)
		}
	}
	md := r.Markdown()
	for _, s := range []string{"## Image changes", "since prev.cdx.json: 1 packages upgraded, 2 downgraded, 1 added, 1 removed",
		"### Packages downgraded (2)", "| `librados2.x86_64` | `2:18.2.4-1.el9` | `1:19.0-1.el9` |", "### Users (1)", "| `slurm` |"} {
		if !strings.Contains(md, s) {
			t.Errorf("Markdown lacks %q:\n%s", s, md)
		}
	}
	var back Report
	if js, err := r.JSON(); err != nil || json.Unmarshal(js, &back) != nil || !reflect.DeepEqual(back.Packages, want) {
		t.Errorf("JSON does not read back: %v", err)
	}
	if s := r.Summary(); !strings.Contains(s, "Snapshots: 1 changed (epel)") || !strings.Contains(s, "Users: 1 changed (slurm)") {
		t.Errorf("summary:\n%s", s)
	}
}

func TestDiffNoPrevious(t *testing.T) {
	r := Diff(nil, fullImage(), "")
	if len(r.Packages.Added) != 5 || r.Previous != "" {
		t.Errorf("added %d, previous %q", len(r.Packages.Added), r.Previous)
	}
	if s := r.Summary(); !strings.HasPrefix(s, "no previous image to compare with: the whole content (5 packages)") {
		t.Errorf("summary:\n%s", s)
	}
	if !strings.Contains(r.Markdown(), "### Packages added (5)") {
		t.Errorf("Markdown:\n%s", r.Markdown())
	}
}

// A previous manifest: names without epochs (and gpg-pubkey without an
// arch, as rpm -qa prints it), no users, python pins only.
func TestDiffFromManifest(t *testing.T) {
	m := `{"image": {"os_name": "Rocky Linux 9.6",
	  "binaries": {"node_exporter": {"version": "1.8.2", "sha256": "` + strings.Repeat("0f", 32) + `", "files": ["/usr/local/bin/node_exporter"]}}, "kernel": "5.14.0-570.58.1.el9_6.x86_64",
	  "snapshots": {"baseos": "20251106T211545", "epel": "20251106T211545"},
	  "content": {"python": {"/opt/venv": ["Requests==2.32.3", "--hash=sha256:00"]},
	    "git": {"/opt/ood/apps/jupyter": {"repo": "https://github.com/example/jupyter.git", "ref": "v1.2", "commit": "` + strings.Repeat("1a", 20) + `"}},
	    "downloads": {"/usr/local/bin/tool": {"url": "https://example.org/tool-1.0", "sha256": "` + strings.Repeat("ef", 32) + `"}},
	    "containers": [{"image": "registry.example.org:5000/ohpc/slurm:24.05", "user": "podman", "digest": "sha256:` + strings.Repeat("cd", 32) + `"}]}},
	  "packages": ["bash-5.1.8-9.el9.x86_64", "librados2-18.2.4-1.el9.x86_64", "kernel-core-5.14.0-570.58.1.el9_6.x86_64",
	    "gpg-pubkey-350d275d-6279464b", "mlnx-tools-24.10-0.2410068.x86_64"]}`
	prev, err := Parse([]byte(m))
	if err != nil {
		t.Fatal(err)
	}
	cur := fullImage()
	r := Diff(prev, cur, "manifest.json")
	if r.Changed() {
		t.Errorf("the same content, read from a manifest, reports changes:\n%s", r.Summary())
	}
	if !strings.Contains(r.Summary(), "not compared (the previous record lacks them): users, python, source image") {
		t.Errorf("summary:\n%s", r.Summary())
	}
}

func TestParseNVRA(t *testing.T) {
	for in, want := range map[string]RPM{
		"bash-5.1.8-9.el9.x86_64":         {Name: "bash", EVR: EVR{"", "5.1.8", "9.el9"}, Arch: "x86_64"},
		"gpg-pubkey-350d275d-6279464b":    {Name: "gpg-pubkey", EVR: EVR{"", "350d275d", "6279464b"}, Arch: "(none)"},
		"python3-dnf-4.14.0-9.el9.noarch": {Name: "python3-dnf", EVR: EVR{"", "4.14.0", "9.el9"}, Arch: "noarch"},
	} {
		if got, err := ParseNVRA(in); err != nil || got != want {
			t.Errorf("%s: %+v, %v", in, got, err)
		}
	}
	if _, err := ParseNVRA("bash"); err == nil {
		t.Error("bash: want an error")
	}
}
