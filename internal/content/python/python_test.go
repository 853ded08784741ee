package python

import (
	"context"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/git"
)

// The fetch stages each environment's requirements (on the VM: nothing
// downloaded here) and warns about what pip will not verify; the install
// reports the commit of each git requirement, which the record needs.
func TestFetchInstallRecord(t *testing.T) {
	es := []PythonEnv{
		{Path: "/opt/a", IndexURL: "http://idx/simple", Requirements: []string{"x==1"}},
		{System: true, Requirements: []string{"t @ git+https://h/t.git@v1", "y==2"}},
	}
	f, err := Kind{}.Fetch(context.Background(), content.Env{WorkDir: "/w", Source: "vm"}, es)
	if err != nil || len(f.Script.Staged) != 2 || f.Script.Staged[1].Name != "python-1.txt" || string(f.Script.Staged[1].Data) != "t @ git+https://h/t.git@v1\ny==2\n" ||
		len(f.Warnings) != 3 || !strings.Contains(f.Warnings[0], "index_url http://idx/simple is plain http") || len(f.Owners) != 2 {
		t.Fatalf("fetch %+v: %v", f, err)
	}
	sc, err := Kind{}.Install(content.Env{WorkDir: "/w"}, es)
	if err != nil || len(sc.Calls) != 3 || strings.Join(sc.Calls[2], " ") != "fatimage_pip_git_commit python_envs[1] python3 t" {
		t.Fatalf("install %q: %v", sc.Calls, err)
	}
	if _, err := (Kind{}).Record(content.Env{}, es); err == nil || !strings.Contains(err.Error(), "python_envs[1]: t: pip did not record the commit") {
		t.Errorf("no commit: %v", err)
	}
	commit := strings.Repeat("e", 40)
	r, err := Kind{}.Record(content.Env{Installed: "python-git-commit python_envs[1] t " + commit + "\n"}, es)
	gits, _ := r["python_git"].(map[string]git.Record)
	pins, _ := r["python"].(map[string][]string)
	if err != nil || gits["python3 t"].Commit != commit || strings.Join(pins["python3"], " ") != "t @ git+https://h/t.git@v1 y==2" {
		t.Errorf("record %+v: %v", r, err)
	}
	if errs := CheckSource(es, "host"); len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "python_envs[1]: t is a git requirement") {
		t.Errorf("host: %v", errs)
	}
}
