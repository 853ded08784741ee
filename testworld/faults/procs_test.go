package faults

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// vmProcess finds, from the host, the one process running in a VM of this
// package's lab (in another network namespace than the test's) whose command line has
// every word of args, e.g. a provisioner's `dnf ... update`. It waits up
// to timeout for it to appear.
func vmProcess(t *testing.T, timeout time.Duration, args ...string) int {
	t.Helper()
	hostNet, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(timeout)
	for {
		var found []int
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, d := range dirs {
			raw, err := os.ReadFile(d + "/cmdline")
			if err != nil || len(raw) == 0 {
				continue
			}
			argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
			if !slices.ContainsFunc(argv, func(a string) bool { return filepath.Base(a) == args[0] }) {
				continue
			}
			if filepath.Base(argv[0]) == "sudo" || filepath.Base(argv[0]) == "sh" || filepath.Base(argv[0]) == "bash" {
				continue // its parents, not the process itself
			}
			if !containsAll(argv, args[1:]) {
				continue
			}
			if ns, err := os.Readlink(d + "/ns/net"); err != nil || ns == hostNet {
				continue
			}
			pid, _ := strconv.Atoi(filepath.Base(d))
			if !theLab.VMs.Runs(pid) {
				continue // another lab's VM (other packages' tests run beside these)
			}
			if processState(pid) == "T" {
				continue // frozen by an earlier test (the reset tests SIGSTOP dnf), not this build's
			}
			found = append(found, pid)
		}
		found = outermost(found)
		switch {
		case len(found) == 1:
			return found[0]
		case len(found) > 1:
			t.Fatalf("%d VM processes match %q: %v", len(found), args, found)
		case time.Now().After(deadline):
			t.Fatalf("no VM process matching %q within %s", args, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// outermost drops the processes whose parent is also in pids: a forked
// child (dnf's Python forks keep its argv) is not another dnf.
func outermost(pids []int) []int {
	var out []int
	for _, pid := range pids {
		if !slices.Contains(pids, parentOf(pid)) {
			out = append(out, pid)
		}
	}
	return out
}

// parentOf is the parent pid from /proc/<pid>/stat (0 if it is gone).
func parentOf(pid int) int {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold spaces, so split after ")"
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

func containsAll(argv, words []string) bool {
	for _, w := range words {
		if !slices.Contains(argv, w) {
			return false
		}
	}
	return true
}

// processState is the state letter of /proc/<pid>/stat ("" once the
// process is gone): R running, S sleeping, T stopped, Z zombie.
func processState(pid int) string {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(raw)
	// the command name in parentheses may hold spaces: the state follows
	// the last ')'
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}
