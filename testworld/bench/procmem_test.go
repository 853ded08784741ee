package bench

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestWatchProcs sees the process of the watched group by its name, with
// its arguments and memory, and not a process of the same name in
// another group.
func TestWatchProcs(t *testing.T) {
	start := func(arg string, own bool) *exec.Cmd {
		c := exec.Command("sleep", arg)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: own}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c
	}
	watched := start("30", true)
	start("31", false) // the test's own group
	m := WatchProcs(watched.Process.Pid, "slee", 20*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	r := m.Stop()
	if r.Procs != 1 || r.MaxArgs != "30" {
		t.Fatalf("want the one sleep of the watched group, got %+v", r)
	}
	if r.MaxHWM <= 0 || r.PeakSum <= 0 || r.SumHWM != r.MaxHWM || r.PeakSum > r.SumHWM {
		t.Errorf("memory figures %+v: want VmHWM and a peak VmRSS no larger", r)
	}
	if m := WatchProcs(watched.Process.Pid, "packer-plugin-", 20*time.Millisecond); m.Stop().Procs != 0 {
		t.Error("a process of another name was counted")
	}
}
