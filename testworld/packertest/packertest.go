// Package packertest runs the real packer binary with this plugin installed
// into a private plugin directory, for end-to-end tests.
//
// The SDK's acctest writes templates and logs into the package directory,
// finds packer only on PATH and expects the plugin installed globally; here
// every run gets its own directory, plugin path and captured output.
package packertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// PluginSource is the address templates use in required_plugins.
const PluginSource = "github.com/stackhpc/fatimage"

// Packer is a packer binary with the plugin installed.
type Packer struct {
	Bin        string // packer binary
	Home       string // private PACKER_PLUGIN_PATH and PACKER_CONFIG_DIR live here
	PluginPath string
}

var (
	once     sync.Once
	shared   *Packer
	setupErr error
	skipWhy  string
)

// Setup builds the plugin once per test binary and installs it with
// `packer plugins install --path`. When no packer binary is found it skips
// the test, or fails it under FATIMAGE_E2E=1 (needs.Unavailable).
func Setup(t testing.TB) *Packer {
	t.Helper()
	once.Do(func() { shared, skipWhy, setupErr = setup() })
	if setupErr != nil {
		t.Fatalf("packertest: %v", setupErr)
	}
	if skipWhy != "" {
		needs.Unavailable(t, "packertest: "+skipWhy)
	}
	return shared
}

// Cleanup removes the private plugin directory; call it from TestMain.
func Cleanup() {
	if shared != nil {
		os.RemoveAll(shared.Home)
	}
}

func setup() (*Packer, string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, "", err
	}
	bin := os.Getenv("PACKER_BIN")
	if bin == "" {
		bin = filepath.Join(root, ".tools", "bin", "packer")
		if _, err := os.Stat(bin); err != nil {
			if bin, err = exec.LookPath("packer"); err != nil {
				return nil, "no packer binary: run `make tools` or set PACKER_BIN", nil
			}
		}
	}
	home, err := os.MkdirTemp("", "fatimage-packertest-")
	if err != nil {
		return nil, "", err
	}
	p := &Packer{Bin: bin, Home: home, PluginPath: filepath.Join(home, "plugins")}
	plugin := filepath.Join(home, "packer-plugin-fatimage")
	build := exec.Command("go", "build", "-o", plugin, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("building the plugin: %v\n%s", err, out)
	}
	if r := p.run(context.Background(), home, nil, "plugins", "install", "--path", plugin, PluginSource); r.ExitCode != 0 {
		return nil, "", fmt.Errorf("packer plugins install: exit %d\n%s%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	return p, "", nil
}

// ModuleRoot is the directory holding this module's go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(data, []byte("module github.com/stackhpc/packer-plugin-fatimage\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod of github.com/stackhpc/packer-plugin-fatimage not found above the working directory")
		}
		dir = parent
	}
}

// Result is one finished packer command.
type Result struct {
	Args           []string
	Stdout, Stderr string
	ExitCode       int
}

// Output is stdout and stderr together, for error checks.
func (r Result) Output() string { return r.Stdout + r.Stderr }

// Run runs packer in dir with extra environment variables ("K=V") and
// fails the test if packer cannot be started; a packer still running
// after five minutes is interrupted (its result says so).
func (p *Packer) Run(t testing.TB, dir string, env []string, args ...string) Result {
	t.Helper()
	return p.RunWithin(t, 5*time.Minute, dir, env, args...)
}

// RunWithin is Run with a time bound of bound: packer still running then
// is interrupted and has cleanupBound to clean up.
func (p *Packer) RunWithin(t testing.TB, bound time.Duration, dir string, env []string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	r := p.run(ctx, dir, env, args...)
	if r.ExitCode < 0 {
		t.Fatalf("packer %s: could not run: %s", strings.Join(args, " "), r.Stderr)
	}
	return r
}

// Command is the packer command Run and Start use (private plugin
// directory, no colour, no checkpoint), for callers that read its output
// as it comes (the benchmarks stamp each line with the time it arrived).
func (p *Packer) Command(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	return p.command(ctx, dir, env, args...)
}

// command prepares packer with the private plugin directory.
func (p *Packer) command(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, p.Bin, args...)
	// Its own process group, so a signal reaches packer, its panic
	// wrapper and its plugins, as Ctrl-C in a terminal does. A run over
	// its time bound is interrupted, not killed: packer then deletes what
	// it made, so one slow build leaves nothing behind to fail the lab's
	// leftover checks of the tests after it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return interrupt(cmd) }
	cmd.WaitDelay = cleanupBound
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PACKER_PLUGIN_PATH="+p.PluginPath,
		"PACKER_CONFIG_DIR="+filepath.Join(p.Home, "config"),
		"CHECKPOINT_DISABLE=1",
		"PACKER_NO_COLOR=1",
	)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// cleanupBound is how long an interrupted packer has to clean up before
// it is killed.
const cleanupBound = 2 * time.Minute

// interrupt sends SIGINT to cmd's process group.
func interrupt(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }

// stop interrupts pr's packer and waits for it to exit (killing its
// group after cleanupBound): the cloud resources it made are deleted.
func (pr *Proc) stop() {
	if interrupt(pr.cmd) == nil {
		select {
		case <-pr.done:
			return
		case <-time.After(cleanupBound):
		}
	}
	syscall.Kill(-pr.cmd.Process.Pid, syscall.SIGKILL) // already gone is fine
	<-pr.done
}

func (p *Packer) run(ctx context.Context, dir string, env []string, args ...string) Result {
	cmd := p.command(ctx, dir, env, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := Result{Args: args, Stdout: stdout.String(), Stderr: stderr.String()}
	if ctx.Err() != nil {
		r.Stderr += "\npackertest: the run's time bound passed; packer was interrupted to clean up\n"
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.ExitCode = exit.ExitCode()
	default:
		r.ExitCode = -1
		r.Stderr += err.Error()
	}
	return r
}

// Proc is a packer command running in the background, for tests that
// interrupt it.
type Proc struct {
	cmd    *exec.Cmd
	out    logtail.Buffer
	mu     sync.Mutex // guards result
	done   chan struct{}
	result Result
}

// Start starts packer like Run but returns at once.
func (p *Packer) Start(t testing.TB, dir string, env []string, args ...string) *Proc {
	t.Helper()
	// Its own process group (command), so Signal can reach it the way a
	// terminal's Ctrl-C does: packer's panic wrapper ignores SIGINT and
	// relies on the whole group receiving it.
	cmd := p.command(context.Background(), dir, env, args...)
	pr := &Proc{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &pr.out, &pr.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting packer: %v", err)
	}
	go func() {
		err := cmd.Wait()
		pr.mu.Lock()
		pr.result = Result{Args: args, Stdout: pr.out.String()}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			pr.result.ExitCode = exit.ExitCode()
		}
		pr.mu.Unlock()
		close(pr.done)
	}()
	t.Cleanup(func() {
		select {
		case <-pr.done:
		default:
			pr.stop()
		}
	})
	return pr
}

// Output is what packer has printed so far (stdout and stderr).
func (pr *Proc) Output() string {
	return pr.out.String()
}

// WaitFor waits until the output contains s, failing the test after
// timeout or if packer exits first.
func (pr *Proc) WaitFor(t testing.TB, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(pr.Output(), s) {
		select {
		case <-pr.done:
			t.Fatalf("packer exited before printing %q:\n%s", s, pr.Output())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("packer did not print %q within %s:\n%s", s, timeout, pr.Output())
		}
	}
}

// Signal sends sig to packer's whole process group (packer, its panic
// wrapper and its plugins), as Ctrl-C in a terminal does.
func (pr *Proc) Signal(sig syscall.Signal) error { return syscall.Kill(-pr.cmd.Process.Pid, sig) }

// Wait waits for packer to exit, at most timeout.
func (pr *Proc) Wait(t testing.TB, timeout time.Duration) Result {
	t.Helper()
	select {
	case <-pr.done:
	case <-time.After(timeout):
		pr.stop()
		t.Fatalf("packer did not exit within %s (interrupted to clean up):\n%s", timeout, pr.Output())
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.result
}
