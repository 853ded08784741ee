package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// Stack is one whole way of building the fat image with `packer build`:
// today's stack (hashicorp/packer-plugin-openstack's builder and
// hashicorp/packer-plugin-ansible's provisioner running a playbook) or
// ours (fatimage-openstack and fatimage). Both get the same source image,
// flavor, network, snapshots and package sets (Workload).
type Stack struct {
	Name     string
	Playbook []byte // nil: ours
	// Once: only in the first round of a whole-build comparison (no
	// goal depends on it, and it is the slowest).
	Once bool
}

// Official reports whether s is today's stack.
func (s Stack) Official() bool { return s.Playbook != nil }

// Stacks are the contenders of the whole-build comparison.
var Stacks = []Stack{
	{Name: "fatimage"},
	{Name: "official+expert", Playbook: ExpertPlaybook},
	{Name: "official+appliance", Playbook: Playbook, Once: true},
}

// OfficialPluginDir is where `make official-tools` puts the official
// plugins: OFFICIAL_PLUGIN_DIR, else the module's .tools/bin.
func OfficialPluginDir() (string, error) {
	if dir := os.Getenv("OFFICIAL_PLUGIN_DIR"); dir != "" {
		return dir, nil
	}
	root, err := packertest.ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".tools", "bin"), nil
}

// InstallOfficial installs the official openstack and ansible plugins into
// p's private plugin directory; missing binaries fail under FATIMAGE_E2E=1.
func InstallOfficial(tb testing.TB, p *packertest.Packer) {
	tb.Helper()
	dir, err := OfficialPluginDir()
	if err != nil {
		tb.Fatal(err)
	}
	needs.Tools(tb, "/usr/bin/ansible-playbook")
	for _, pl := range []struct{ bin, src string }{
		{"packer-plugin-openstack", "github.com/hashicorp/openstack"},
		{"packer-plugin-ansible", "github.com/hashicorp/ansible"},
	} {
		bin := filepath.Join(dir, pl.bin)
		if _, err := os.Stat(bin); err != nil {
			needs.Unavailable(tb, fmt.Sprintf("%s not built: run `make official-tools` or set OFFICIAL_PLUGIN_DIR", bin))
		}
		if r := p.Run(tb, tb.TempDir(), nil, "plugins", "install", "--path", bin, pl.src); r.ExitCode != 0 {
			tb.Fatalf("packer plugins install %s: %s", pl.src, r.Output())
		}
	}
}

// source is what both builders get: the lab's base image, flavor and
// floating IP network, SSH as rocky.
func source(name string) map[string]any {
	return map[string]any{
		"source_image_name":   "Rocky-9-GenericCloud-Base-9.6",
		"flavor":              "m1.small",
		"floating_ip_network": "public",
		"ssh_username":        lab.SSHUser,
		"ssh_timeout":         "5m",
		"image_name":          name,
	}
}

// WriteTemplate writes s's build of w as build.pkr.json (HCL2's JSON
// syntax) into dir, with the playbook and its extra vars beside it.
func (s Stack) WriteTemplate(l *lab.Lab, w *Workload, dir, name string) error {
	src := source(name)
	var tmpl map[string]any
	if !s.Official() {
		tmpl = map[string]any{
			"packer": map[string]any{"required_plugins": map[string]any{
				"fatimage": map[string]any{"source": packertest.PluginSource, "version": ">= 0.1.0"}}},
			"source": map[string]any{"fatimage-openstack": map[string]any{"lab": src}},
			"build": map[string]any{
				"sources":     []string{"source.fatimage-openstack.lab"},
				"provisioner": []any{map[string]any{"fatimage": w.ProvisionerConfig()}},
			},
		}
	} else {
		src["cloud"] = l.Env["OS_CLOUD"]
		// as the appliance's template has it for the official builder
		// (ours sets it by default): the build VM's ansible-init stays idle
		src["instance_metadata"] = map[string]string{"ansible_init_disable": "true"}
		vars, err := json.Marshal(w.AnsibleVars())
		if err != nil {
			return err
		}
		for f, data := range map[string][]byte{"playbook.yml": s.Playbook, "vars.json": vars} {
			if err := os.WriteFile(filepath.Join(dir, f), data, 0o600); err != nil {
				return err
			}
		}
		env := append(AnsibleEnv(dir), "ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks",
			"PROFILE_TASKS_TASK_OUTPUT_LIMIT=all", "PROFILE_TASKS_SORT_ORDER=none", "PATH=/usr/bin:/bin:/usr/sbin:/sbin")
		tmpl = map[string]any{
			"packer": map[string]any{"required_plugins": map[string]any{
				"openstack": map[string]any{"source": "github.com/hashicorp/openstack", "version": "= 1.1.2"},
				"ansible":   map[string]any{"source": "github.com/hashicorp/ansible", "version": "= 1.1.2"},
			}},
			"source": map[string]any{"openstack": map[string]any{"lab": src}},
			"build": map[string]any{
				"sources": []string{"source.openstack.lab"},
				"provisioner": []any{map[string]any{"ansible": map[string]any{
					"command":          "/usr/bin/ansible-playbook",
					"playbook_file":    filepath.Join(dir, "playbook.yml"),
					"user":             lab.SSHUser,
					"use_proxy":        false,
					"ansible_env_vars": env,
					"extra_arguments": []string{"-e", "@" + filepath.Join(dir, "vars.json"),
						"-e", "ansible_python_interpreter=/usr/bin/python3"},
				}}},
			},
		}
	}
	data, err := json.MarshalIndent(tmpl, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "build.pkr.json"), data, 0o600)
}

// Line is one line of packer's output and when it arrived.
type Line struct {
	At   time.Time
	Text string
}

// Build is a `packer build` running in the background whose output lines
// are stamped as they arrive (packer's own -timestamp-ui has one-second
// resolution).
type Build struct {
	Dir, Log string
	Start    time.Time
	End      time.Time
	Exit     int
	cmd      *exec.Cmd
	mu       sync.Mutex
	lines    []Line
	done     chan struct{}
}

// StartBuild starts `packer build .` in dir with the lab's environment and
// PACKER_LOG into its own file, in its own process group (for SIGINT).
func StartBuild(tb testing.TB, p *packertest.Packer, l *lab.Lab, dir string) *Build {
	tb.Helper()
	b := &Build{Dir: dir, Log: filepath.Join(dir, "packer.log"), done: make(chan struct{})}
	env := append(l.Environ(), "PACKER_LOG=1", "PACKER_LOG_PATH="+b.Log)
	b.cmd = p.Command(context.Background(), dir, env, "build", ".")
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r, w := io.Pipe()
	b.cmd.Stdout, b.cmd.Stderr = w, w
	b.Start = time.Now()
	if err := b.cmd.Start(); err != nil {
		tb.Fatalf("starting packer: %v", err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			b.mu.Lock()
			b.lines = append(b.lines, Line{At: time.Now(), Text: sc.Text()})
			b.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	go func() {
		err := b.cmd.Wait()
		b.End = time.Now()
		w.Close()
		<-read
		if e, ok := err.(*exec.ExitError); ok {
			b.Exit = e.ExitCode()
		} else if err != nil {
			b.Exit = -1
		}
		close(b.done)
	}()
	tb.Cleanup(func() {
		select {
		case <-b.done:
		default:
			_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
			<-b.done
		}
	})
	return b
}

// Lines is the output so far.
func (b *Build) Lines() []Line {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Line(nil), b.lines...)
}

// Output is the output so far as text.
func (b *Build) Output() string {
	var s strings.Builder
	for _, l := range b.Lines() {
		s.WriteString(l.Text + "\n")
	}
	return s.String()
}

// WaitFor waits until a line matches re; false if packer exited first or
// timeout passed.
func (b *Build) WaitFor(re *regexp.Regexp, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		for _, l := range b.Lines() {
			if re.MatchString(l.Text) {
				return true
			}
		}
		select {
		case <-b.done:
			return false
		case <-deadline:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Exited reports whether packer has exited.
func (b *Build) Exited() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// Interrupt sends SIGINT to packer's process group, as Ctrl-C does.
func (b *Build) Interrupt() error { return syscall.Kill(-b.cmd.Process.Pid, syscall.SIGINT) }

// Wait waits for packer to exit, at most timeout.
func (b *Build) Wait(tb testing.TB, timeout time.Duration) {
	tb.Helper()
	select {
	case <-b.done:
	case <-time.After(timeout):
		tb.Fatalf("packer did not exit within %s:\n%s", timeout, logtail.Lines(b.Output(), 40))
	}
}

// Wall is the build's duration.
func (b *Build) Wall() time.Duration { return b.End.Sub(b.Start) }

// Phase is a named span of a build.
type Phase struct {
	Name string
	Took time.Duration
}

// Build phases, from UI lines both builders print (the SDK's SSH step and
// each builder's stop step): the cloud's part before SSH, the guest's boot
// until SSH answers, provisioning, and stop + snapshot + upload.
var phaseMarks = []struct{ name, mark string }{
	{"server up (API, scheduling, spawn)", "Waiting for SSH to become available"},
	{"guest boot until SSH", "Connected to SSH!"},
	{"provisioning", "Stopping server"},
	{"stop, snapshot, image active", ""}, // until packer exits
}

// Phases splits b's wall time at phaseMarks.
func (b *Build) Phases() []Phase {
	lines := b.Lines()
	var out []Phase
	from := b.Start
	for _, m := range phaseMarks {
		to := b.End
		if m.mark != "" {
			to = time.Time{}
			for _, l := range lines {
				if strings.Contains(l.Text, m.mark) && l.At.After(from.Add(-time.Millisecond)) {
					to = l.At
					break
				}
			}
			if to.IsZero() {
				out = append(out, Phase{Name: m.name, Took: -1})
				continue
			}
		}
		out = append(out, Phase{Name: m.name, Took: to.Sub(from)})
		from = to
	}
	return out
}

// profileLine is a profile_tasks summary line: "Task name ---- 12.34s".
var profileLine = regexp.MustCompile(`^(?:.*?: )?(\S.*?) -{3,} (\d+\.\d+)s$`)

// ProfileTasks parses the per-task times profile_tasks printed at the end
// of an Ansible run (one line per task, PROFILE_TASKS_TASK_OUTPUT_LIMIT=all).
func ProfileTasks(out string) []Phase {
	var ps []Phase
	for _, l := range strings.Split(out, "\n") {
		m := profileLine.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		f, _ := strconv.ParseFloat(m[2], 64)
		ps = append(ps, Phase{Name: m[1], Took: time.Duration(f * float64(time.Second))})
	}
	return ps
}

// fatimageStep is the provisioner's step line: "fatimage: <step>".
var fatimageStep = regexp.MustCompile(`: fatimage: (.*)$`)

// ProvisionerSteps times the fatimage provisioner's steps from the stamped
// output: each step lasts until the next step line (the last until the
// builder's stop).
func ProvisionerSteps(lines []Line) []Phase {
	var ps []Phase
	var cur string
	var at time.Time
	for _, l := range lines {
		end := strings.Contains(l.Text, "Stopping server")
		m := fatimageStep.FindStringSubmatch(l.Text)
		if (m != nil || end) && cur != "" {
			ps = append(ps, Phase{Name: cur, Took: l.At.Sub(at)})
			cur = ""
		}
		if end {
			break
		}
		if m != nil {
			cur, at = m[1], l.At
		}
	}
	return ps
}

// ProvisioningGroups are the common phases both provisioners' steps or
// tasks are grouped into, so the per-phase figures compare like with like.
var ProvisioningGroups = []string{"facts", "repos and keys", "packages (update, install, remove)", "reboot", "binaries", "users", "rest (services, plugins, cleanup, image.json)"}

// GroupOf classifies a provisioner step or an Ansible task by its name.
func GroupOf(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "gathering facts"):
		return ProvisioningGroups[0]
	case strings.Contains(n, "repositor") && !strings.Contains(n, "disabl") || strings.Contains(n, "gpg"):
		return ProvisioningGroups[1]
	case strings.HasPrefix(n, "reboot") || strings.Contains(n, "the vm is back") || strings.Contains(n, "reboot is needed"):
		return ProvisioningGroups[3]
	case strings.Contains(n, "package") && !strings.Contains(n, "list installed"):
		return ProvisioningGroups[2]
	case strings.Contains(n, "cleanup"):
		return ProvisioningGroups[6]
	case strings.Contains(n, "binar"):
		return ProvisioningGroups[4]
	case strings.Contains(n, "users") || strings.Contains(n, "groups with"):
		return ProvisioningGroups[5]
	}
	return ProvisioningGroups[6]
}

// Grouped sums phases by GroupOf.
func Grouped(ps []Phase) map[string]time.Duration {
	m := map[string]time.Duration{}
	for _, p := range ps {
		m[GroupOf(p.Name)] += p.Took
	}
	return m
}
