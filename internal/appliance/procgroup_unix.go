//go:build unix

package appliance

import (
	"os/exec"
	"syscall"
)

// stopAsGroup makes cancelling cmd stop the whole run: ansible-playbook,
// its workers, ssh and the inventory script, not only the first process.
func stopAsGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
}
