package fatimage

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"os"
	"path"
	"regexp"
	"strings"
	"sync"
	"testing"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// scriptComm is a communicator that runs nothing: it answers the plain
// commands, records the step of each script (from its name NN-<step>.sh)
// and prints a dnf trace line for the scripts that run dnf.
type scriptComm struct {
	packersdk.Communicator
	mu      sync.Mutex
	steps   []string
	scripts map[string][]byte // by step
	outs    map[string]string // what a step's script prints
}

var reInlineScript = regexp.MustCompile(`^\(umask 077 && printf %s (\S+) \| base64 -d > '([^']+)'\)`)

func (c *scriptComm) Start(_ context.Context, cmd *packersdk.RemoteCmd) error {
	out, errOut := "", ""
	switch m := reInlineScript.FindStringSubmatch(cmd.Command); {
	case cmd.Command == "id -un":
		out = "rocky\n"
	case m != nil:
		script, _ := base64.StdEncoding.DecodeString(m[1])
		step := strings.TrimSuffix(path.Base(m[2])[3:], ".sh")
		c.mu.Lock()
		c.steps = append(c.steps, step)
		if c.scripts == nil {
			c.scripts = map[string][]byte{}
		}
		c.scripts[step] = script
		c.mu.Unlock()
		if bytes.Contains(script, []byte("\nrun_transaction\n")) {
			errOut = "+fatimage: dnf -y shell /w/transaction.dnf\n"
		}
		if step == "facts" {
			out = "os=Rocky Linux 9.6\npackage_count=2\n--packages--\na-1\nb-2\n"
		}
		out += c.outs[step]
	}
	go func() {
		_, _ = io.WriteString(cmd.Stdout, out) // a buffer: cannot fail
		_, _ = io.WriteString(cmd.Stderr, errOut)
		cmd.SetExited(0)
	}()
	return nil
}

func (c *scriptComm) Upload(string, io.Reader, *os.FileInfo) error { return nil }

// Provision runs the table's steps that apply, in order, and every run
// starts from a fresh state: the second run on the same Provisioner
// counts only its own dnf commands.
func TestProvisionRunsTheStepTable(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	if err := p.Prepare(map[string]any{"reboot": "never", "selinux": "unchanged", "packages": []string{"htop"}}); err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 2; run++ {
		comm := &scriptComm{}
		var out bytes.Buffer
		ui := &packersdk.BasicUi{Writer: &out, ErrorWriter: &out}
		if err := p.Provision(context.Background(), ui, comm, nil); err != nil {
			t.Fatal(err)
		}
		want := "login-home packages cleanup disable-repos facts image-json final"
		if got := strings.Join(comm.steps, " "); got != want {
			t.Errorf("run %d: scripts %q, want %q", run, got, want)
		}
		if !strings.Contains(out.String(), "fatimage: done: 1 dnf command(s), 0 reboot(s)") {
			t.Errorf("run %d output:\n%s", run, out.String())
		}
		// the summary times each step done before it, once
		times := regexp.MustCompile(`fatimage: step times: (.*)`).FindAllStringSubmatch(out.String(), -1)
		want = `^connect \S+, repos \S+, login-home \S+, packages \S+, reboot \S+, cleanup \S+, disable-repos \S+, image-json \d[0-9.]*[mnµ]?s$`
		if len(times) != 1 || !regexp.MustCompile(want).MatchString(times[0][1]) {
			t.Errorf("run %d: step times %q, want one line matching %s", run, times, want)
		}
	}
	// every step of the table has its name once
	seen := map[string]bool{}
	for _, st := range steps {
		if st.name == "" || seen[st.name] || st.run == nil {
			t.Errorf("step %q: empty, duplicate or without run", st.name)
		}
		seen[st.name] = true
	}
}

// The six system settings kinds are one step, one script: system.sh
// once, every file staged in one upload unpacked first, then the kinds'
// calls in the table's order.
func TestSystemStepOneScript(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	if err := p.Prepare(map[string]any{
		"reboot": "never", "selinux": "unchanged", "cleanup": false, "move_login_home": false,
		"systemd_units":      []map[string]any{{"name": "a.service", "content": "[Unit]"}},
		"sysctl":             []map[string]any{{"name": "90-x", "settings": map[string]string{"vm.x": "1"}}},
		"modprobe_blacklist": []map[string]any{{"name": "m", "modules": []string{"esp4"}}},
		"tmpfiles":           []map[string]any{{"name": "t", "content": "d /run/x"}},
		"limits":             []map[string]any{{"name": "l", "content": "* soft nofile 1"}},
		"kernel_args":        []string{"rd.auto=1"},
	}); err != nil {
		t.Fatal(err)
	}
	comm := &scriptComm{}
	var out bytes.Buffer
	if err := p.Provision(context.Background(), &packersdk.BasicUi{Writer: &out, ErrorWriter: &out}, comm, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(comm.steps, " "); strings.Count(got, "system") != 1 {
		t.Fatalf("scripts %q: want one system script", got)
	}
	sc := string(comm.scripts["system"])
	if n := strings.Count(sc, "\nfatimage_put_files() {"); n != 1 {
		t.Errorf("system.sh %d times in the script", n)
	}
	var order []string
	for _, l := range strings.Split(sc, "\n") {
		if f, _, ok := strings.Cut(l, " "); ok && (f == "unpack_bundle" || f == "fatimage_put_files" || f == "fatimage_unit_state" || f == "fatimage_kernel_args") {
			order = append(order, f)
		}
	}
	want := "unpack_bundle fatimage_put_files fatimage_unit_state fatimage_put_files fatimage_put_files fatimage_put_files fatimage_put_files fatimage_kernel_args"
	if strings.Join(order, " ") != want {
		t.Errorf("calls %v, want %s\n%s", order, want, sc)
	}
	if !strings.Contains(out.String(), "system settings") {
		t.Errorf("no headline:\n%s", out.String())
	}
}
