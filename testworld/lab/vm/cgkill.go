package vm

import (
	"bytes"
	"errors"
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
// again), then every process in it is killed (cgroup.kill, or SIGKILL to
// each listed in cgroup.procs on kernels before 5.14), and the kill waits
// until the cgroup is empty. Killing PID 1 alone would let the other
// processes run until the PID namespace is torn down, and would miss
// processes in the VM's cgroup that are outside its PID namespace.

// killCgroup freezes and kills every process in cgroup dir (and its
// children) and waits up to timeout until none is left.
func killCgroup(dir string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	if err := os.WriteFile(filepath.Join(dir, "cgroup.freeze"), []byte("1"), 0); err == nil {
		// best effort: a cgroup whose processes are dying may never report frozen
		for !cgroupEvent(dir, "frozen") && time.Now().Before(deadline.Add(-timeout/2)) {
			time.Sleep(time.Millisecond)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("vm: cgroup.kill %s: %w", dir, err)
		}
		killListed(dir) // no cgroup.kill (Linux < 5.14)
	}
	for cgroupEvent(dir, "populated") {
		if time.Now().After(deadline) {
			return fmt.Errorf("vm: processes of cgroup %s survived SIGKILL for %s", dir, timeout)
		}
		killListed(dir) // a process forked while the first kill was sent
		time.Sleep(time.Millisecond)
	}
	return nil
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

// killListed SIGKILLs every process listed in the cgroup tree.
func killListed(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		return nil
	})
}
