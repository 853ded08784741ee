package fatimage

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/python"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/pypi"
)

func TestPythonValidation(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	if err := os.WriteFile(good, []byte("# pins\njupyter==1.1.1 \\\n    --hash=sha256:"+strings.Repeat("a", 64)+"\nnotebook==7.6.0 --hash=sha256:"+strings.Repeat("b", 64)+"  # comment\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	loose := filepath.Join(dir, "loose.txt")
	if err := os.WriteFile(loose, []byte("# the second line is loose\njupyter>=1.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mixed := filepath.Join(dir, "mixed.txt")
	if err := os.WriteFile(mixed, []byte("jupyter==1.1.1 --hash=sha256:"+strings.Repeat("a", 64)+"\nnotebook==7.6.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runPrepareCases(t, []prepareCase{
		{"ok", map[string]any{"python_envs": []map[string]any{{"path": "/opt/jupyter", "interpreter": "python3.12", "requirements_file": good, "owner": "podman"}}}, ""},
		{"system ok", map[string]any{"python_envs": []map[string]any{{"system": true, "requirements": []string{"openstacksdk==4.1.0"}}}}, ""},
		{"no path", map[string]any{"python_envs": []map[string]any{{"requirements": []string{"a==1"}}}}, `python_envs[0]: path "" is required (or set system = true)`},
		{"path and system", map[string]any{"python_envs": []map[string]any{{"path": "/opt/x", "system": true, "requirements": []string{"a==1"}}}}, "python_envs[0]: path and system = true exclude each other"},
		{"no requirements", map[string]any{"python_envs": []map[string]any{{"path": "/opt/x"}}}, "python_envs[0]: requirements or requirements_file is required"},
		{"unpinned", map[string]any{"python_envs": []map[string]any{{"path": "/opt/x", "requirements": []string{"jupyter"}}}}, `python_envs[0]: requirement "jupyter" must be pinned exactly as name==version`},
		{"loose file", map[string]any{"python_envs": []map[string]any{{"path": "/opt/x", "requirements_file": loose}}}, `python_envs[0]: requirements_file ` + loose + ` line 2: requirement "jupyter>=1.0" must be pinned exactly`},
		{"mixed hashes", map[string]any{"python_envs": []map[string]any{{"path": "/opt/x", "requirements_file": mixed}}}, "python_envs[0]: 1 of 2 requirements have hashes: pip requires a hash on every one once any has one"},
		{"missing file", map[string]any{"python_envs": []map[string]any{{"path": "/opt/x", "requirements_file": filepath.Join(dir, "nope.txt")}}}, "python_envs[0]: requirements_file: open "},
		{"bad interpreter", map[string]any{"python_envs": []map[string]any{{"path": "/opt/x", "interpreter": "python3 -I", "requirements": []string{"a==1"}}}}, `python_envs[0]: interpreter "python3 -I" must be a command name or an absolute path`},
		{"bad index", map[string]any{"python_envs": []map[string]any{{"path": "/opt/x", "index_url": "file:///srv", "requirements": []string{"a==1"}}}}, `python_envs[0]: index_url "file:///srv" must be an http(s) URL`},
		{"index creds", map[string]any{"python_envs": []map[string]any{{"path": "/opt/x", "extra_index_url": "https://u:p@h/simple", "requirements": []string{"a==1"}}}}, `python_envs[0]: extra_index_url "https://h/simple" must not carry credentials (user info before @)`},
		{"system owner", map[string]any{"python_envs": []map[string]any{{"system": true, "owner": "podman", "requirements": []string{"a==1"}}}}, "python_envs[0]: owner applies to a venv, not to system = true"},
		{"twice", map[string]any{"python_envs": []map[string]any{{"path": "/opt/x", "requirements": []string{"a==1"}}, {"path": "/opt/x", "requirements": []string{"b==1"}}}}, "python_envs[1]: /opt/x is configured twice"},
	})
}

// TestPythonScript runs the install script locally with the real
// python3 -m venv and pip against the lab's index: pins land, hashes are
// checked, a second run changes nothing.
func TestPythonScript(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chowns the venv to root")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is required")
	}
	idx, err := pypi.Start(pypi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	work, venv := t.TempDir(), filepath.Join(t.TempDir(), "opt", "jupyter")
	var jupyterlab pypi.Dist
	for _, d := range idx.Dists() {
		if d.Name == "jupyterlab" && d.Version == "4.6.1" {
			jupyterlab = d
		}
	}
	c := &Config{ContentOptions: ContentOptions{PythonEnvs: []python.PythonEnv{{Path: venv, Interpreter: "/usr/bin/python3", IndexURL: idx.IndexURL(),
		Requirements: []string{"jupyterlab==4.6.1 --hash=sha256:" + idx.WheelSHA256(jupyterlab), "jupyter_server==2.20.0 --hash=sha256:" + strings.Repeat("0", 64)}}}}}
	env := content.Env{WorkDir: work, Source: "vm"}
	// the requirements file, as the fetch stages it
	write := func() {
		f, err := python.Kind{}.Fetch(context.Background(), env, c.PythonEnvs)
		if err != nil || len(f.Script.Staged) != 1 {
			t.Fatalf("fetch %+v: %v", f, err)
		}
		if err := os.WriteFile(filepath.Join(work, f.Script.Staged[0].Name), f.Script.Staged[0].Data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	install := func() *vmScript {
		cs, err := python.Kind{}.Install(env, c.PythonEnvs)
		if err != nil {
			t.Fatal(err)
		}
		return kindScript(python.Kind{}, cs)
	}
	write()
	out, err := runLocal(t, work, install())
	if err == nil || !strings.Contains(out, "python_envs[0]: pip install failed") || !strings.Contains(out, "HASHES") {
		t.Fatalf("a wrong hash was accepted: %v\n%s", err, out)
	}
	for _, d := range idx.Dists() {
		if d.Name == "jupyter_server" {
			c.PythonEnvs[0].Requirements[1] = "jupyter_server==2.20.0 --hash=sha256:" + idx.WheelSHA256(d)
		}
	}
	for round, want := range []string{"installed python packages into " + venv, "unchanged " + venv} {
		write()
		out, err := runLocal(t, work, install())
		if err != nil || !strings.Contains(out, want) {
			t.Fatalf("round %d: %v\n%s", round, err, out)
		}
	}
	got, err := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import jupyterlab, jupyter_server; print(jupyterlab.__version__, jupyter_server.__version__)").CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != "4.6.1 2.20.0" {
		t.Fatalf("imports: %v %s", err, got)
	}
}
