package fatimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/downloads"
)

// TestDownloadScripts: a bad sha256 installs nothing; a file and an
// extracted archive (strip_components) are installed once, then left alone.
func TestDownloadScripts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the install chowns to root")
	}
	work, root := t.TempDir(), t.TempDir()
	tgz := makeTarball(t, map[string]string{"top-1.0/bin/tool": "T", "top-1.0/README": "R"})
	ds := []downloads.Download{
		{URL: "http://h/f.txt", SHA256: sha([]byte("hello\n")), Destination: filepath.Join(root, "etc", "f.txt"), Mode: "0640"},
		{URL: "http://h/a.tgz", SHA256: sha(tgz), Destination: filepath.Join(root, "opt", "top"), Extract: true, StripComponents: 1},
	}
	stage := func(second []byte) {
		if err := os.WriteFile(downloads.Staged(work, 0), []byte("hello\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(downloads.Staged(work, 1), second, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	script := func() *vmScript {
		sc := newScript("content")
		for i, d := range ds {
			sc.call("fatimage_verify", strings.Repeat("x", i)+"downloads", d.SHA256, downloads.Staged(work, i), d.URL)
		}
		cs, err := downloads.Kind{}.Install(content.Env{WorkDir: work}, ds)
		if err != nil {
			t.Fatal(err)
		}
		return sc.add(kindScript(downloads.Kind{}, cs))
	}
	stage([]byte("not the archive"))
	out, err := runLocal(t, work, script())
	if err == nil || !strings.Contains(out, "sha256 mismatch: want "+sha(tgz)+", got "+sha([]byte("not the archive"))+" (http://h/a.tgz); nothing installed") {
		t.Fatalf("bad sha256: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("installed before the check: %v", entries)
	}
	for round := 0; round < 2; round++ {
		stage(tgz)
		out, err = runLocal(t, work, script())
		if err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, out)
		}
		want := "installed "
		if round == 1 {
			want = "unchanged "
		}
		if strings.Count(out, want) != 2 {
			t.Fatalf("round %d: want 2 %q:\n%s", round, want, out)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(root, "opt", "top", "bin", "tool")); string(data) != "T" {
		t.Fatalf("extracted tool %q", data)
	}
	if st, err := os.Stat(ds[0].Destination); err != nil || st.Mode().Perm() != 0o640 {
		t.Fatalf("file: %v %v", st, err)
	}
	if left, _ := filepath.Glob(filepath.Join(work, "*")); len(left) != 0 {
		t.Fatalf("staging left: %v", left)
	}
}

// An extract with members unpacks only them: helm's archive leaves
// /usr/bin/helm, not its LICENSE and README.md.
func TestDownloadExtractMembers(t *testing.T) {
	src, dest := t.TempDir(), t.TempDir()
	for _, f := range []string{"linux-amd64/helm", "linux-amd64/LICENSE", "linux-amd64/README.md"} {
		if err := os.MkdirAll(filepath.Join(src, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, f), []byte(f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	staged := filepath.Join(t.TempDir(), "helm.tar.gz")
	if out, err := exec.Command("tar", "-czf", staged, "-C", src, "linux-amd64").CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	owner, group := currentOwner(t)
	sc := newScript(kindBody(downloads.Kind{})).call("fatimage_download_extract", "downloads[0]", staged, dest, "1", owner, group, "linux-amd64/helm")
	out, _, err := runFaked(t, sc, nil)
	if err != nil {
		t.Fatal(err, out)
	}
	entries, _ := os.ReadDir(dest)
	if len(entries) != 1 || entries[0].Name() != "helm" {
		t.Errorf("unpacked %v:\n%s", entries, out)
	}
}

// image.json records an unchecked download with the sha256 the VM found
// (the fetch script prints it), marked unchecked; a pinned one as pinned.
func TestUncheckedDownloadRecord(t *testing.T) {
	sum := strings.Repeat("c", 64)
	c := mustGroups(t, []string{"k9s"}, map[string]any{"github_releases_url": "http://releases.lab", "downloads": []map[string]any{
		{"url": "https://x.example/f", "sha256": strings.ToUpper(sum), "destination": "/opt/f"},
	}})
	s := &state{cfg: c.cfg, plan: c, workDir: "/w"}
	sc := newScript()
	if _, err := s.fetchKind(context.Background(), sc, kindDownloads, nil); err != nil {
		t.Fatal(err)
	}
	if calls := sc.calls.String(); !strings.Contains(calls, "fatimage_download_sum 0 '/w/download-0'\n") || strings.Contains(calls, "fatimage_download_sum 1") {
		t.Errorf("fetch script:\n%s", calls)
	}
	// the report, as the VM prints it
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "download-0"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runLocal(t, work, newScript(kindBody(downloads.Kind{})).call("fatimage_download_sum", "0", filepath.Join(work, "download-0")))
	if x := sha256.Sum256([]byte("x")); err != nil || downloads.ParseSums(out)[0] != hex.EncodeToString(x[:]) {
		t.Errorf("report: %v\n%s", err, out)
	}
	found := strings.Repeat("d", 64)
	s.content.fetched = map[string]string{"downloads": "fetched\nDOWNLOAD-SHA256 0 " + found + "\nother 1 2\n"}
	if err := s.recordKind(kindDownloads); err != nil {
		t.Fatal(err)
	}
	r, _ := s.imageContentRecord().kinds["downloads"].(map[string]downloads.Record)
	if got := r["/usr/bin (members k9s)"]; got.SHA256 != found || !got.Unchecked {
		t.Errorf("k9s record %+v", got)
	}
	if got := r["/opt/f"]; got.SHA256 != sum || got.Unchecked {
		t.Errorf("pinned record %+v", got)
	}
}
