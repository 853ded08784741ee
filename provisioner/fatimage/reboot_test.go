package fatimage

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// bootComm is a VM double for the reboot decisions: the transaction
// reports a pending reboot, the reboot script changes the boot id, and
// the log keeps the order of the steps' scripts and the reboots.
type bootComm struct {
	packersdk.Communicator
	mu   sync.Mutex
	boot int
	log  []string
}

func (c *bootComm) Start(_ context.Context, cmd *packersdk.RemoteCmd) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := ""
	switch m := reInlineScript.FindStringSubmatch(cmd.Command); {
	case cmd.Command == "id -un":
		out = "rocky\n"
	case cmd.Command == bootIDCommand:
		out = fmt.Sprintf("boot-%d\n", c.boot)
	case m != nil:
		script, _ := base64.StdEncoding.DecodeString(m[1])
		step := strings.TrimSuffix(path.Base(m[2])[3:], ".sh")
		switch {
		case bytes.Contains(script, []byte("systemctl reboot")):
			c.log = append(c.log, "REBOOT")
			c.boot++
		case bytes.Contains(script, []byte("\nreboot_check\n")):
			c.log = append(c.log, step)
			out = "REBOOT-PENDING: kernel-core installed after the boot\n"
		case step == "facts":
			c.log = append(c.log, step)
			out = "os=Rocky Linux 9.6\npackage_count=1\n--packages--\na-1\n"
		default:
			c.log = append(c.log, step)
		}
	}
	go func() {
		_, _ = io.WriteString(cmd.Stdout, out) // a buffer: cannot fail
		cmd.SetExited(0)
	}()
	return nil
}

func (c *bootComm) Upload(string, io.Reader, *os.FileInfo) error { return nil }

// readManifest reads a run's manifest_output.
func readManifest(t *testing.T, file string) manifest {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// With reboot = "auto" a pending reboot is done only before a step that
// needs the running kernel; image.json says whether and why.
func TestRebootOnlyBeforeKernelSteps(t *testing.T) {
	clearArkEnv(t)
	for _, tc := range []struct {
		name     string
		packages []string
		reboot   string
		want     string
		rebooted bool
	}{
		{"no kernel step", []string{"htop"}, "auto", "login-home packages cleanup", false},
		{"kernel step", []string{"htop", "kmod-lustre-client"}, "auto", "login-home packages REBOOT kernel-packages cleanup", true},
		{"kernel step, never", []string{"kmod-lustre-client"}, "never", "login-home packages kernel-packages cleanup", false},
		{"always", []string{"htop"}, "always", "login-home packages REBOOT cleanup", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manifestFile := path.Join(t.TempDir(), "m.json")
			var p Provisioner
			if err := p.Prepare(map[string]any{"reboot": tc.reboot, "selinux": "unchanged", "packages": tc.packages, "manifest_output": manifestFile}); err != nil {
				t.Fatal(err)
			}
			comm := &bootComm{}
			var out bytes.Buffer
			if err := p.Provision(context.Background(), &packersdk.BasicUi{Writer: &out, ErrorWriter: &out}, comm, nil); err != nil {
				t.Fatal(err, out.String())
			}
			if got := strings.Join(comm.log, " "); !strings.HasPrefix(got, tc.want+" ") {
				t.Errorf("scripts %q, want them to start %q", got, tc.want)
			}
			m := readManifest(t, manifestFile)
			pending := []string{"kernel-core installed after the boot"}
			if m.Reboot.Rebooted != tc.rebooted || (m.Reboots == 1) != tc.rebooted {
				t.Errorf("manifest %+v, %d reboots", m.Reboot, m.Reboots)
			}
			if tc.rebooted && tc.reboot == "auto" && !slices.Equal(m.Reboot.Why, pending) {
				t.Errorf("manifest does not say why: %+v", m.Reboot)
			}
			if !tc.rebooted && !slices.Equal(m.Reboot.Pending, pending) {
				t.Errorf("manifest does not keep the pending reason: %+v", m.Reboot)
			}
		})
	}
}
