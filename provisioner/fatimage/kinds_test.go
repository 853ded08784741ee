package fatimage

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/dashboards"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/downloads"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/git"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/python"
)

// installScript is k's script installing items, for a kind staging no
// files.
func installScript[T any](t *testing.T, k content.Kind[T], items []T) *vmScript {
	t.Helper()
	cs, err := k.Install(content.Env{WorkDir: "/w"}, items)
	if err != nil || len(cs.Staged) > 0 {
		t.Fatalf("install: %v, %d staged", err, len(cs.Staged))
	}
	return kindScript(k, cs)
}

// Every content kind of the step table is checked and merged at Prepare
// and its shell is valid sh as the provisioner sends it.
func TestContentKinds(t *testing.T) {
	kinds := contentKinds()
	if len(kinds) == 0 {
		t.Fatal("no content kind in the step table")
	}
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k.option()] {
			t.Errorf("kind %s twice in the step table", k.option())
		}
		seen[k.option()] = true
		cmd := exec.Command("sh", "-n")
		cmd.Stdin = strings.NewReader(newScript("kind-"+k.option()).render("/tmp/w", "rocky"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v: %s", k.option(), err, out)
		}
	}
}

// The content steps run the moved kinds and the older ones in one
// script each, in the order they always had (downloads, git, python,
// dashboards), and image.json records the moved kinds from the reports.
func TestContentSteps(t *testing.T) {
	src := filepath.Join(t.TempDir(), "mine.json")
	if err := os.WriteFile(src, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Config{ContentSource: "vm", ContentOptions: ContentOptions{
		Downloads:         []downloads.Download{{URL: "https://h/f", InsecureSkipChecksum: true, Destination: "/opt/f"}},
		GitCheckouts:      []git.GitCheckout{{Repo: "https://h/a.git", Tag: "v1", Destination: "/opt/a"}},
		PythonEnvs:        []python.PythonEnv{{Path: "/opt/venv", Requirements: []string{"a==1"}}},
		GrafanaDashboards: []dashboards.GrafanaDashboard{{Source: src}},
	}}
	s := stateOf(c)
	commit, sum := strings.Repeat("c", 40), strings.Repeat("d", 64)
	comm := &scriptComm{outs: map[string]string{
		"content-fetch": "DOWNLOAD-SHA256 0 " + sum + "\nfatimage-git-commit git_checkouts[0] " + commit + "\n",
		"content":       "DASHBOARD grafana_dashboards[0] " + sum + "\n"}}
	s.comm, s.ui, s.workDir = comm, &packersdk.BasicUi{Writer: io.Discard, ErrorWriter: io.Discard}, "/w"
	for _, st := range []struct {
		name string
		run  func(context.Context, *state) error
	}{{"content-fetch", stepFetchContent}, {"content", stepInstallContent}} {
		s.step = st.name
		if err := st.run(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
	}
	order := func(script []byte, fns ...string) {
		t.Helper()
		last := -1
		for _, fn := range fns {
			i := bytes.Index(script, []byte("\n"+fn+" "))
			if i < last {
				t.Errorf("%s out of order (or missing) in:\n%s", fn, script)
			}
			last = i
		}
	}
	// python's requirements, then the local dashboard, each a bundle
	order(comm.scripts["content-fetch"], "fatimage_fetch", "fatimage_download_sum", "fatimage_git_fetch", "unpack_bundle")
	if n := bytes.Count(comm.scripts["content-fetch"], []byte("\nunpack_bundle ")); n != 2 {
		t.Errorf("%d bundles", n)
	}
	order(comm.scripts["content"], "fatimage_download_file", "fatimage_git_install", "fatimage_pip", "fatimage_grafana_dashboard")
	r := s.imageContentRecord().kinds
	dl, _ := r["downloads"].(map[string]downloads.Record)
	gits, _ := r["git"].(map[string]git.Record)
	dash, _ := r["grafana_dashboards"].(map[string]dashboards.Record)
	if dl["/opt/f"].SHA256 != sum || gits["/opt/a"].Commit != commit || dash["mine.json"].SHA256 != sum {
		t.Errorf("record %+v", r)
	}
}
