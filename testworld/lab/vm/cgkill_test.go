package vm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHardResetKillsTheWholeCgroup: a hard reset leaves no process of the
// VM running, not even one that is stopped (SIGSTOP) or outside the VM's
// PID namespace but in its cgroup (as a hypervisor's vCPU threads are):
// when HardReset returns, both are dead. Killing PID 1 alone, as the lab
// did before, took the PID namespace down but left the other one running.
func TestHardResetKillsTheWholeCgroup(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	vm, _ := l.bootVM("cgkill", 95, nil, "", 0)
	c := dial(t, l.ip(95), l.signer, sshWithin)
	// a stopped process inside the VM, found from the host by its argv
	// (stopped only once it runs with its output redirected, or the stopped
	// child would hold the session's output open, and only once the forked
	// shell has exec'd sleep: on a loaded host a STOP sent before would
	// leave the shell's argv for good)
	pid := mustRun(t, c, `sleep 4242 </dev/null >/dev/null 2>&1 & p=$!; until [ "$(cat /proc/$p/comm 2>/dev/null)" = sleep ]; do sleep 0.05; done; echo $p`)
	mustRun(t, c, "kill -STOP "+pid)
	vm.mu.Lock()
	cg := vm.proc.cgroup
	vm.mu.Unlock()
	inVM := pidInCgroup(t, cg, "sleep\x004242")
	if st := waitProcState(inVM, "T", 10*time.Second); st != "T" {
		t.Fatalf("the VM's sleep (pid %d) is in state %q, want stopped", inVM, st)
	}
	// a stopped process in the VM's cgroup but not its PID namespace
	outside := exec.Command("sleep", "4243")
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = outside.Process.Kill(); _ = outside.Wait() })
	leaf := filepath.Join(cg, "init.scope")
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(outside.Process.Pid)), 0); err != nil {
		t.Fatalf("moving pid %d into %s: %v", outside.Process.Pid, leaf, err)
	}
	if err := syscall.Kill(outside.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if st := waitProcState(outside.Process.Pid, "T", 10*time.Second); st != "T" {
		t.Fatalf("the process in the VM's cgroup (pid %d) is in state %q, want stopped", outside.Process.Pid, st)
	}
	if err := vm.HardReset(); err != nil {
		t.Fatal(err)
	}
	for name, pid := range map[string]int{"the VM's stopped sleep": inVM, "the stopped process in the VM's cgroup": outside.Process.Pid} {
		if st := procState(pid); st != "" && st != "Z" {
			t.Errorf("%s (pid %d) outlived the hard reset (state %s)", name, pid, st)
		}
	}
	// the VM is back
	c = dial(t, l.ip(95), l.signer, sshWithin)
	mustRun(t, c, "true")
}

// pidInCgroup finds the host pid of the process in cgroup tree dir whose
// command line holds args (NUL-separated).
func pidInCgroup(t *testing.T, dir, args string) int {
	t.Helper()
	var found int
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.IsDir() || found != 0 {
			return nil
		}
		b, _ := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			cmd, _ := os.ReadFile("/proc/" + f + "/cmdline")
			if strings.Contains(string(cmd), args) {
				found, _ = strconv.Atoi(f)
			}
		}
		return nil
	})
	if found == 0 {
		t.Fatalf("no process %q in cgroup %s", strings.ReplaceAll(args, "\x00", " "), dir)
	}
	return found
}

// procState is the state letter of pid from /proc ("" when gone).
// waitProcState polls pid's state until it is want or the time is up and
// returns the last state read: a signal is delivered when the process next
// runs, so a process just sent SIGSTOP may still read "R" or "S".
func waitProcState(pid int, want string, within time.Duration) string {
	deadline := time.Now().Add(within)
	for {
		st := procState(pid)
		if st == want || time.Now().After(deadline) {
			return st
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}
