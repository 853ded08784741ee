package fatimage

import (
	"fmt"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
)

func testRepos() []Repo {
	t := true
	return []Repo{
		{Name: "baseos", RepoFile: "rocky", RepoName: "baseos", BaseURL: "https://ark/pulp/content/rocky/9.6/BaseOS/x86_64/os/20251106T211545", GPGCheck: true, Enabled: &t},
		{Name: "appstream", RepoFile: "rocky", RepoName: "appstream", BaseURL: "https://ark/pulp/content/rocky/9.6/AppStream/x86_64/os/20251106T211545", GPGCheck: true},
		{Name: "epel", RepoFile: "epel", RepoName: "epel", BaseURL: "https://ark/pulp/content/epel/9/20251101T000000", Priority: 5, ModuleHotfixes: true, Options: map[string]string{"skip_if_unavailable": "1"}},
	}
}

func TestRenderRepoFilesWithCredentials(t *testing.T) {
	files := renderRepoFiles(testRepos(), "ark-user", "s3cret", false)
	if len(files) != 2 || files[0].Name != "rocky.repo" || files[1].Name != "epel.repo" {
		t.Fatalf("files %+v", files)
	}
	want := `# Written by the packer fatimage provisioner.
[baseos]
baseurl = https://ark/pulp/content/rocky/9.6/BaseOS/x86_64/os/20251106T211545
enabled = 1
gpgcheck = 1
name = baseos
password = s3cret
username = ark-user

[appstream]
baseurl = https://ark/pulp/content/rocky/9.6/AppStream/x86_64/os/20251106T211545
enabled = 1
gpgcheck = 1
name = appstream
password = s3cret
username = ark-user
`
	if files[0].Content != want {
		t.Errorf("rocky.repo:\n%s\nwant:\n%s", files[0].Content, want)
	}
	wantEpel := `# Written by the packer fatimage provisioner.
[epel]
baseurl = https://ark/pulp/content/epel/9/20251101T000000
enabled = 1
gpgcheck = 0
module_hotfixes = 1
name = epel
password = s3cret
priority = 5
skip_if_unavailable = 1
username = ark-user
`
	if files[1].Content != wantEpel {
		t.Errorf("epel.repo:\n%s\nwant:\n%s", files[1].Content, wantEpel)
	}
}

func TestRenderRepoFilesWithoutCredentials(t *testing.T) {
	for _, f := range renderRepoFiles(testRepos(), "", "", false) {
		if strings.Contains(f.Content, "username") || strings.Contains(f.Content, "password") {
			t.Errorf("%s has credentials:\n%s", f.Name, f.Content)
		}
		if !strings.Contains(f.Content, "enabled = 1") {
			t.Errorf("%s not enabled", f.Name)
		}
	}
}

func TestRenderRepoFilesDisabled(t *testing.T) {
	for _, f := range renderRepoFiles(testRepos(), "ark-user", "s3cret", true) {
		if strings.Contains(f.Content, "s3cret") || strings.Contains(f.Content, "ark-user") {
			t.Errorf("%s keeps credentials:\n%s", f.Name, f.Content)
		}
		if strings.Contains(f.Content, "enabled = 1") || !strings.Contains(f.Content, "enabled = 0") {
			t.Errorf("%s not disabled:\n%s", f.Name, f.Content)
		}
	}
}

func TestRenderDisabledRepoFromInput(t *testing.T) {
	f := false
	r := testRepos()[0]
	r.Enabled = &f
	if s := renderSection(r, "", "", false); !strings.Contains(s, "enabled = 0") {
		t.Error(s)
	}
}

func TestSnapshotTimestamp(t *testing.T) {
	if got := snapshotTimestamp(Repo{BaseURL: "https://x/a/b/20250101T000000/"}); got != "20250101T000000" {
		t.Error(got)
	}
	if got := snapshotTimestamp(Repo{BaseURL: "https://x/a", Timestamp: "T"}); got != "T" {
		t.Error(got)
	}
}

// The awk program disables every section, including those without an
// enabled line, and drops existing enabled lines.
func TestDisableAllAWK(t *testing.T) {
	dir := t.TempDir()
	in := "[a]\nname=a\nenabled=1\nbaseurl=x\n\n[b]\nname=b\n  enabled = 1\n[c]\nenabled=0\n"
	f := filepath.Join(dir, "x.repo")
	if err := os.WriteFile(f, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", scriptBody("repofiles")+`awk "$disable_all_awk" "$1"`, "sh", f).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "[a]\nenabled=0\nname=a\nbaseurl=x\n\n[b]\nenabled=0\nname=b\n[c]\nenabled=0\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// Merging keeps the sections of the image's file that are not ours
// (disabled when asked), and merging the result again gives it back.
func TestOtherSectionsAWK(t *testing.T) {
	dir := t.TempDir()
	ours := renderRepoFiles(testRepos(), "", "", false)[0]
	image := "# Rocky\n[baseos]\nname=Rocky BaseOS\nmirrorlist=https://mirrors.rockylinux.org/x\nenabled=1\n\n[baseos-source]\nname=src\nenabled = 1\nmirrorlist=https://mirrors.rockylinux.org/y\n\n"
	merge := func(existing string, off int) string {
		f := filepath.Join(dir, "rocky.repo")
		if err := os.WriteFile(f, []byte(existing), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("sh", "-c", scriptBody("repofiles")+`awk -v keep="$2" -v off="$3" "$other_sections_awk" "$1"`, "sh", f, strings.Join(ours.Sections, " "), fmt.Sprint(off)).Output()
		if err != nil {
			t.Fatal(err)
		}
		return ours.Content + string(out)
	}
	once := merge(image, 1)
	if !strings.HasSuffix(once, "\n[baseos-source]\nenabled=0\nname=src\nmirrorlist=https://mirrors.rockylinux.org/y\n") ||
		strings.Contains(once, "Rocky BaseOS") || strings.Contains(once, "# Rocky") {
		t.Errorf("merged:\n%s", once)
	}
	if twice := merge(once, 1); twice != once {
		t.Errorf("not stable:\n%s\n---\n%s", once, twice)
	}
	if kept := merge(image, 0); !strings.Contains(kept, "[baseos-source]\nname=src\nenabled = 1\n") {
		t.Errorf("replace_repos = false must keep the section as it is:\n%s", kept)
	}
}

func TestFailingCommandAndTail(t *testing.T) {
	out := "+fatimage: echo hi\nhi\n+fatimage: dnf -y install nosuch\nError: Unable to find a match: nosuch\n"
	if got := failingCommand(out); got != "dnf -y install nosuch" {
		t.Error(got)
	}
	var b strings.Builder
	for i := 0; i < 50; i++ {
		b.WriteString("line\n")
	}
	if n := strings.Count(tail(b.String(), 20), "\n"); n != 19 {
		t.Error(n)
	}
}

type recUI struct {
	packersdk.Ui
	msgs []string
}

func (r *recUI) Message(m string) { r.msgs = append(r.msgs, m) }

func TestRedactAndHideTrace(t *testing.T) {
	// internal/redact knows what Prepare registered: the one filter
	redact.Add("s3cret")
	p := &state{plan: &plan{cfg: &Config{}, repoPassword: "s3cret"}}
	ui := &recUI{}
	w := &uiWriter{ui: ui, redact: p.redact}
	for _, chunk := range []string{"+fatimage: dnf -y install x\npassword: s3cret\npart", "ial line\n!fatimage: the cause\n"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(ui.msgs, "|") != "password: <sensitive>|partial line|the cause" {
		t.Errorf("%q", ui.msgs)
	}
	e := &cmdError{Step: "packages", Command: "dnf -y install x", Status: 1, Tail: p.redact("username: u\npassword: s3cret")}
	if strings.Contains(e.Error(), "s3cret") || !strings.Contains(e.Error(), "fatimage packages: dnf -y install x exited with status 1") {
		t.Error(e.Error())
	}
}

func TestCountDNF(t *testing.T) {
	out := "+fatimage: dnf -y update\nfoo\n+fatimage: dnf needs-restarting -r\n+fatimage: rpm --import /k\n++fatimage: dnf clean all\ndnf is great\n"
	if n := countDNF(out); n != 3 {
		t.Errorf("countDNF = %d", n)
	}
}

// Errors say when the VM went away and, first, what a script or dnf
// said the cause is.
func TestCmdErrorMessages(t *testing.T) {
	cut := (&cmdError{Step: "update", Command: "dnf -y update", Status: packersdk.CmdDisconnect, Tail: "Running transaction"}).Error()
	if strings.Contains(cut, "2300218") || !strings.HasPrefix(cut, "fatimage update: dnf -y update was cut off: the SSH connection to the VM was lost") {
		t.Error(cut)
	}
	s := &state{plan: &plan{cfg: &Config{}, repos: []Repo{{RepoName: "baseos"}}}}
	refused := s.commandError("repos", "sudo -n sh -eu x.sh", 1, "+fatimage: dnf -y makecache --disablerepo=* --enablerepo=baseos\n"+
		"Errors during downloading metadata for repository 'baseos':\n  - Status code: 403 for https://ark/x/repodata/repomd.xml (IP: 10.0.0.1)\n").Error()
	first, rest, _ := strings.Cut(refused, "\n")
	if !strings.HasPrefix(first, `repository "baseos": the server refused access (HTTP 403 for https://ark/x/repodata/repomd.xml): check repo_username and repo_password`) ||
		!strings.HasPrefix(rest, "fatimage repos: dnf -y makecache --disablerepo=* --enablerepo=baseos exited with status 1; last output:") {
		t.Error(refused)
	}
	// a script's own cause comes first and the command is the script
	own := s.commandError("binaries-fetch", "sudo -n sh -eu x.sh", 1, "+fatimage: curl -o a u\n!fatimage: binaries: x 1: sha256 mismatch: want a, got b (u)\n").Error()
	if !strings.HasPrefix(own, "binaries: x 1: sha256 mismatch: want a, got b (u)\nfatimage binaries-fetch: sudo -n sh -eu x.sh exited with status 1") {
		t.Error(own)
	}
	// no cause known: the failing command heads the error
	plain := s.commandError("files", "sudo -n sh -eu x.sh", 1, "+fatimage: tar -xf x\ntar: x: Cannot open\n").Error()
	if !strings.HasPrefix(plain, "fatimage files: tar -xf x exited with status 1") {
		t.Error(plain)
	}
}
