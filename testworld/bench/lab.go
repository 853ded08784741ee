// Package bench holds the side-by-side benchmarks of issue 7 (`make
// bench`): the fatimage provisioner against an ansible-core playbook doing
// the same work, the provisioner against the bare commands it runs (the
// floor), and a lab build's API calls and state-change latencies. The
// helpers here drive lab VMs the way provisioner/fatimage's lab tests do:
// the Packer SDK's real SSH communicator, and a counting wrapper on the VM
// side so both contenders are measured by the same means.
package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// VM is a booted lab server with an SSH client for checks and setup.
type VM struct {
	*labtest.Server
	Client *labtest.Client
	Key    *Key // the benchmark key, once InstallCounters ran
	stop   func()
}

// Boot boots a VM from the lab's base image and logs in.
func Boot(ctx context.Context, tb testing.TB, l *lab.Lab, name string) *VM {
	tb.Helper()
	srv, c, stop := labtest.BootDial(ctx, tb, l, name, "")
	return &VM{Server: srv, Client: c, stop: stop}
}

// Close deletes the VM.
func (v *VM) Close() { v.stop() }

// Run runs a command on the VM over the check connection and returns its
// trimmed combined output, failing tb on a non-zero exit.
func (v *VM) Run(tb testing.TB, cmd string) string {
	tb.Helper()
	// the check connection dies when the VM reboots: dial again
	if s, err := v.Client.NewSession(); err == nil {
		s.Close()
	} else {
		v.Client.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c, err := v.Dial(ctx)
		if err != nil {
			tb.Fatalf("ssh %s: %v", v.Name, err)
		}
		v.Client = c
	}
	return v.Client.Run(tb, cmd)
}

// Comm is the Packer SDK's SSH communicator to v with the benchmark key.
func (v *VM) Comm(tb testing.TB) packersdk.Communicator {
	tb.Helper()
	return labtest.Communicator(tb, v.IP, v.Key.Signer)
}

// shQuote quotes s for POSIX sh.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
