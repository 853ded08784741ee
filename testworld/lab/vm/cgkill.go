package vm

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A hard reset or a kill stops a real VM's vCPUs at once: nothing in the
// guest runs another instruction. The lab's equivalent is the boot's
// cgroup: it is frozen first (cgroup.freeze; no process of it is scheduled
// again or forks), every process in it but the boot command itself gets
// SIGKILL (stopped ones too), and the cgroup is thawed so that the boot
// command (unshare, the PID namespace's parent) reaps the VM's PID 1 and
// ends; the kill waits until no other process is left. Killing PID 1 alone
// let the other processes run until the PID namespace was torn down, and
// missed processes in the VM's cgroup outside its PID namespace. The boot
// command is spared so that nothing is left a zombie for the host's init.

// killCgroup kills every process in cgroup dir (and its children) but
// keep, at once, and waits up to timeout until none but keep is left.
func killCgroup(dir string, keep int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	freeze := filepath.Join(dir, "cgroup.freeze")
	if err := os.WriteFile(freeze, []byte("1"), 0); err == nil {
		defer os.WriteFile(freeze, []byte("0"), 0) //nolint:errcheck // a cgroup already gone needs no thaw
		// A freeze takes effect as each task reaches the kernel boundary:
		// wait for it, but not forever (a task in uninterruptible sleep).
		for !cgroupEvent(dir, "frozen") && time.Now().Before(deadline.Add(-timeout/2)) {
			time.Sleep(time.Millisecond)
		}
	}
	for {
		if cgroupPids(dir, keep, true) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("vm: processes of cgroup %s survived SIGKILL for %s", dir, timeout)
		}
		_ = os.WriteFile(freeze, []byte("0"), 0) // let the killed die and be reaped
		time.Sleep(time.Millisecond)
	}
}

// cgroupEvent reads a key of cgroup.events ("populated", "frozen"); a
// cgroup that is gone is neither.
func cgroupEvent(dir, key string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, " "); ok && k == key {
			return v == "1"
		}
	}
	return false
}

// cgroupPids counts the live processes (not zombies) in the cgroup tree
// other than keep, sending each SIGKILL when kill is set.
func cgroupPids(dir string, keep int, kill bool) int {
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for _, f := range bytes.Fields(b) {
			pid, err := strconv.Atoi(string(f))
			if err != nil || pid <= 0 || pid == keep || zombie(pid) {
				continue
			}
			n++
			if kill {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		return nil
	})
	return n
}

// zombie: pid has exited and waits to be reaped (or is gone).
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}
