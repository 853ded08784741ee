package packertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakePacker is a "packer" that records a SIGINT to its process group (as
// packer's cleanup on Ctrl-C) and otherwise runs for a minute.
func fakePacker(t *testing.T) (*Packer, string) {
	t.Helper()
	dir := t.TempDir()
	marker := filepath.Join(dir, "interrupted")
	script := "#!/bin/sh\ntrap 'echo cleaned > " + marker + "; exit 1' INT\necho started\nsleep 60 >/dev/null 2>&1 &\nwait\n"
	bin := filepath.Join(dir, "packer")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Packer{Bin: bin, Home: dir, PluginPath: dir}, marker
}

// TestRunOverBoundInterrupts: a run over its time bound is interrupted,
// not killed, so packer can delete what it made; the result says so.
func TestRunOverBoundInterrupts(t *testing.T) {
	p, marker := fakePacker(t)
	start := time.Now()
	r := p.RunWithin(t, time.Second, t.TempDir(), nil, "build", ".")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("packer was not interrupted: %v (exit %d, %s)", err, r.ExitCode, r.Stderr)
	}
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, "time bound passed") || time.Since(start) > 30*time.Second {
		t.Fatalf("exit %d after %s, stderr %q", r.ExitCode, time.Since(start), r.Stderr)
	}
}

// TestWaitOverBoundInterrupts: Wait over its bound interrupts packer
// before failing the test.
func TestWaitOverBoundInterrupts(t *testing.T) {
	p, marker := fakePacker(t)
	ft := &fatalT{TB: t}
	pr := p.Start(t, t.TempDir(), nil, "build", ".")
	pr.WaitFor(t, "started", 10*time.Second)
	func() {
		defer func() { _ = recover() }()
		pr.Wait(ft, time.Second)
	}()
	if _, err := os.Stat(marker); err != nil || !strings.Contains(ft.msg, "interrupted to clean up") {
		t.Fatalf("marker: %v; failure %q", err, ft.msg)
	}
}

// fatalT records Fatalf instead of ending the test, then panics to leave
// the caller as FailNow would.
type fatalT struct {
	testing.TB
	msg string
}

func (f *fatalT) Helper() {}

func (f *fatalT) Fatalf(format string, args ...any) {
	f.msg = strings.TrimSpace(format)
	panic("fatal")
}
