package pypi

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPipInstall: the real pip installs pinned wheels (and their
// dependencies) from the index into a venv, with --require-hashes.
func TestPipInstall(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	if out, err := exec.Command("/usr/bin/python3", "-m", "venv", venv).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv: %v\n%s", err, out)
	}
	var req strings.Builder
	for _, d := range s.Dists() {
		if d.Name == "jupyterlab" && d.Version != "4.6.1" || d.Name == "PyMySQL" && d.Version != "1.1.1" || d.Name == "openstacksdk" || d.Name == "python-novaclient" || d.Name == "ipykernel" {
			continue
		}
		req.WriteString(d.Name + "==" + d.Version + " --hash=sha256:" + s.WheelSHA256(d) + "\n")
	}
	reqFile := filepath.Join(dir, "req.txt")
	if err := os.WriteFile(reqFile, []byte(req.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(venv, "bin", "pip"), "install", "--no-input", "--disable-pip-version-check", "--index-url", s.IndexURL(), "-r", reqFile)
	cmd.Env = append(os.Environ(), "PIP_CONFIG_FILE=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pip install: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import jupyter, jupyterlab, notebook, jupyter_server; print(jupyter.__version__, jupyterlab.__version__, jupyter_server.__version__)").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1.1.1 4.6.1 2.20.0" {
		t.Fatalf("imports: %v %s", err, out)
	}
	// a console script lands in the venv's bin/ and runs the module
	if out, err := exec.Command(filepath.Join(venv, "bin", "websockify")).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "websockify 0.13.0" {
		t.Fatalf("bin/websockify: %v %s", err, out)
	}
	// a wrong hash is refused
	if err := os.WriteFile(reqFile, []byte("ipykernel==7.3.0 --hash=sha256:"+strings.Repeat("0", 64)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(filepath.Join(venv, "bin", "pip"), "install", "--no-input", "--disable-pip-version-check", "--index-url", s.IndexURL(), "-r", reqFile)
	cmd.Env = append(os.Environ(), "PIP_CONFIG_FILE=/dev/null")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "HASHES") {
		t.Fatalf("wrong hash accepted: %v\n%s", err, out)
	}
}

// TestAdd: a dist added to a running index is listed and downloadable;
// one already served is not added twice.
func TestAdd(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := len(s.Dists())
	d := Dist{Name: "argon2-cffi", Version: "25.1.0"}
	if err := s.Add(d, DefaultDists()[0], d); err != nil {
		t.Fatal(err)
	}
	if got := len(s.Dists()); got != n+1 {
		t.Errorf("after Add: %d dists, want %d", got, n+1)
	}
	if s.WheelSHA256(d) == "" {
		t.Errorf("%s is not served", d.Wheel())
	}
	for path, want := range map[string]string{"/simple/argon2-cffi/": d.Wheel(), "/packages/" + d.Wheel(): "METADATA"} {
		resp, err := http.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d, want 200 with %q", path, resp.StatusCode, want)
		}
	}
}
