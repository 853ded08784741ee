package pulpfake_test

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildFakepulp compiles cmd/fakepulp into a temporary directory.
func buildFakepulp(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the fakepulp binary")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go is not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "fakepulp")
	cmd := exec.Command(goBin, "build", "-o", bin, "github.com/stackhpc/packer-plugin-fatimage/testworld/cmd/fakepulp")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// firstLineWriter hands the first complete line written to it to ch.
type firstLineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	sent bool
	ch   chan string
}

func (w *firstLineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.sent {
		if line, _, ok := strings.Cut(w.buf.String(), "\n"); ok {
			w.sent = true
			w.ch <- line
		}
	}
	return len(p), nil
}

// startFakepulp runs the binary and returns the process and the URL from
// its "listening" line.
func startFakepulp(t *testing.T, bin string, args ...string) (*exec.Cmd, string, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout := &firstLineWriter{ch: make(chan string, 1)}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait() // killed: its status says so
		}
	})

	select {
	case line := <-stdout.ch:
		url, ok := strings.CutPrefix(line, "fakepulp listening on ")
		if !ok {
			t.Fatalf("unexpected first line %q", line)
		}
		return cmd, url, &stderr
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // killed: its status says so
		t.Fatalf("fakepulp did not report listening; stderr:\n%s", stderr.String())
	}
	return nil, "", nil
}

// stopFakepulp sends SIGTERM and expects a clean exit.
func stopFakepulp(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("fakepulp exit: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("fakepulp did not exit after SIGTERM")
	}
}

func TestFakepulpCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses SIGTERM")
	}
	bin := buildFakepulp(t)

	t.Run("demo", func(t *testing.T) {
		dir := t.TempDir()
		envFile := filepath.Join(dir, "ark.env")
		pidFile := filepath.Join(dir, "fakepulp.pid")
		cmd, url, stderr := startFakepulp(t, bin, "-demo", "-env-file", envFile, "-pid-file", pidFile)
		if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/pulp/content$`).MatchString(url) {
			t.Errorf("content URL %q", url)
		}

		env, err := os.ReadFile(envFile)
		if err != nil {
			t.Fatal(err)
		}
		wantEnv := "export ARK_CONTENT_URL=" + url + "\nexport ARK_USERNAME=demo\nexport ARK_PASSWORD=demo-password\n"
		if string(env) != wantEnv {
			t.Errorf("env file:\n%s\nwant:\n%s", env, wantEnv)
		}
		if pid, err := os.ReadFile(pidFile); err != nil || strings.TrimSpace(string(pid)) != strconv.Itoa(cmd.Process.Pid) {
			t.Errorf("pid file %q, %v; pid %d", pid, err, cmd.Process.Pid)
		}

		r := get(t, url+"/rocky/9.6/BaseOS/x86_64/os/")
		expectStatus(t, "demo listing", r, http.StatusOK)
		if got, want := entries(r.body), []string{"20250102T030405/", "20250601T120000/", "20251106T211545/"}; !slices.Equal(got, want) {
			t.Errorf("demo entries %q, want %q", got, want)
		}
		if got, want := entries(get(t, url+"/").body), []string{"OpenHPC/", "epel/", "rocky/"}; !slices.Equal(got, want) {
			t.Errorf("demo root %q, want %q", got, want)
		}
		if got, want := entries(get(t, url+"/OpenHPC/3/").body), []string{"EL_9/", "updates/"}; !slices.Equal(got, want) {
			t.Errorf("demo OpenHPC %q, want %q", got, want)
		}
		hidden := url + "/rocky/9.6/BaseOS/x86_64/os/20260101T000000/repodata/repomd.xml"
		expectStatus(t, "guarded", get(t, hidden), http.StatusForbidden)
		expectStatus(t, "hidden with creds", do(t, http.MethodGet, hidden, "demo", "demo-password"), http.StatusOK)

		stopFakepulp(t, cmd, stderr)
		if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("pid file left behind: %v", err)
		}
	})

	t.Run("config", func(t *testing.T) {
		dir := t.TempDir()
		repo := filepath.Join(dir, "repo", "repodata")
		if err := os.MkdirAll(repo, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "repomd.xml"), []byte("<repomd/>"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := filepath.Join(dir, "config.json")
		if err := os.WriteFile(cfg, []byte(`{"distributions":[
			{"base_path":"local/1","dir":"repo"},
			{"base_path":"local/2","no_publication":true}]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		envFile := filepath.Join(dir, "ark.env")
		cmd, url, stderr := startFakepulp(t, bin, "-config", cfg, "-format", "legacy", "-latency", "1ms", "-env-file", envFile)

		r := get(t, url+"/local/")
		if want := `<!DOCTYPE html><html><body><ul><li><a href="1/">1/</a></li><li><a href="2/">2/</a></li></ul></body></html>`; r.body != want {
			t.Errorf("legacy listing %q", r.body)
		}
		if r := get(t, url+"/local/1/repodata/repomd.xml"); r.body != "<repomd/>" {
			t.Errorf("config dir not served: %d %q", r.status, r.body)
		}
		expect404(t, "no publication", get(t, url+"/local/2/"))
		if env, _ := os.ReadFile(envFile); string(env) != "export ARK_CONTENT_URL="+url+"\n" {
			t.Errorf("env file %q", env)
		}
		stopFakepulp(t, cmd, stderr)
	})

	t.Run("bad flags", func(t *testing.T) {
		cmd := exec.Command(bin, "-format", "9.9")
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("bad -format: %v", err)
		}
	})
}
