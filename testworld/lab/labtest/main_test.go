package labtest

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// childEnv marks a run of this test binary by TestMainWithoutLab: it then
// goes through Main like a lab package does, with the child tests below.
const childEnv = "LABTEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		var l *lab.Lab
		os.Exit(Main(m, &l))
	}
	os.Exit(m.Run())
}

func TestChildPure(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		t.Skip("runs in the child of TestMainWithoutLab only")
	}
	t.Log("pure test ran")
}

func TestChildLab(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		t.Skip("runs in the child of TestMainWithoutLab only")
	}
	Require(t)
	t.Error("a lab test ran past Require without a lab")
}

// TestMainWithoutLab runs this binary as a package whose host cannot run a
// lab, for real: once as an unprivileged user, once as the current user
// with none of the lab's commands on PATH. Each time the probe must say
// why, the pure test must run, and the lab test must skip with the reason,
// or, under FATIMAGE_E2E=1, fail along with the package.
func TestMainWithoutLab(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A copy the unprivileged user can run (go test's build directory is
	// private to root).
	dir := t.TempDir()
	bin := filepath.Join(dir, "labtest.test")
	copyFile(t, exe, bin)
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	emptyPath := filepath.Join(dir, "empty-path")
	if err := os.Mkdir(emptyPath, 0o755); err != nil {
		t.Fatal(err)
	}

	type runner struct {
		name, reason string
		argv         []string
		path         string
	}
	path := os.Getenv("PATH")
	runners := []runner{{"unprivileged", "needs root (running as uid", []string{bin}, path}}
	if os.Geteuid() == 0 {
		needs.Tools(t, "setpriv")
		setpriv, _ := exec.LookPath("setpriv")
		runners = []runner{
			{"unprivileged", "needs root (running as uid 65534)",
				[]string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin}, path},
			{"no-commands", "not found: ip (Debian package iproute2), iptables (Debian package iptables)",
				[]string{bin}, emptyPath},
		}
	}
	for _, r := range runners {
		for _, required := range []bool{false, true} {
			name := r.name
			if required {
				name += "/required"
			}
			t.Run(name, func(t *testing.T) {
				cmd := exec.Command(r.argv[0], append(r.argv[1:], "-test.v", "-test.run", "^TestChild")...)
				cmd.Dir = dir
				cmd.Env = []string{childEnv + "=1", "PATH=" + r.path, "HOME=" + dir}
				if required {
					cmd.Env = append(cmd.Env, needs.RequireEnv+"=1")
				}
				out, err := cmd.CombinedOutput()
				text := string(out)
				t.Logf("child output:\n%s", text)
				for _, want := range []string{"labtest: no lab: ", r.reason, "--- PASS: TestChildPure"} {
					if !strings.Contains(text, want) {
						t.Errorf("output lacks %q", want)
					}
				}
				if strings.Contains(text, "a lab test ran past Require") {
					t.Error("the lab test ran without a lab")
				}
				if required {
					if err == nil {
						t.Error("exit status 0; want a failure under FATIMAGE_E2E=1")
					}
					for _, want := range []string{"--- FAIL: TestChildLab", "labtest: FAIL: no lab: "} {
						if !strings.Contains(text, want) {
							t.Errorf("output lacks %q", want)
						}
					}
				} else {
					if err != nil {
						t.Errorf("exit: %v; want success with the lab test skipped", err)
					}
					if !strings.Contains(text, "--- SKIP: TestChildLab") {
						t.Error("the lab test did not skip visibly")
					}
				}
			})
		}
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
