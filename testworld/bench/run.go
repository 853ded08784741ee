package bench

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
	"golang.org/x/crypto/ssh"

	"github.com/stackhpc/packer-plugin-fatimage/provisioner/fatimage"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
)

//go:embed playbook/fatimage.yml
var Playbook []byte

// ExpertPlaybook is the same work tuned by an Ansible expert (one dnf
// task, one shell task per concern, minimal facts and reboot delays).
//
//go:embed playbook/expert.yml
var ExpertPlaybook []byte

// Result is one contender's run on one VM.
type Result struct {
	Wall time.Duration
	Counts
	SelfDNF int // dnf commands the contender says it ran (provisioner only)
	Reboots int
	// Lines is the provisioner's output, each line stamped as it arrived,
	// and Manifest its manifest_output (provisioner only).
	Lines    []Line
	Manifest string
}

// RunProvisioner runs the fatimage provisioner in-process on v over the
// SDK's SSH communicator, connection included in the wall time. With rec
// set, every upload and command is recorded for the floor. extra is added
// to the workload's provisioner configuration.
func RunProvisioner(ctx context.Context, tb testing.TB, v *VM, w *Workload, rec *Recording, extra map[string]any) Result {
	tb.Helper()
	var p fatimage.Provisioner
	// the provisioner's own counts come from its manifest
	manifest := filepath.Join(tb.TempDir(), "manifest.json")
	conf := w.ProvisionerConfig()
	conf["manifest_output"] = manifest
	maps.Copy(conf, extra)
	if err := p.Prepare(conf); err != nil {
		tb.Fatal(err)
	}
	var out logtail.Buffer
	var stamped stampWriter
	both := io.MultiWriter(&out, &stamped)
	ui := &packersdk.BasicUi{Writer: both, ErrorWriter: both}
	start := time.Now()
	comm := packersdk.Communicator(v.Comm(tb))
	if rec != nil {
		comm = &recordingComm{Communicator: comm, rec: rec}
	}
	if err := p.Provision(ctx, ui, comm, nil); err != nil {
		tb.Fatalf("provisioner on %s: %v\n%s", v.Name, err, logtail.Lines(out.String(), 40))
	}
	r := Result{Wall: time.Since(start), Lines: stamped.Lines(), Manifest: manifest}
	var m struct {
		DNFRuns int `json:"dnf_runs"`
		Reboots int `json:"reboots"`
	}
	if data, err := os.ReadFile(manifest); err != nil {
		tb.Fatal(err)
	} else if err := json.Unmarshal(data, &m); err != nil {
		tb.Fatalf("manifest: %v", err)
	}
	r.SelfDNF, r.Reboots = m.DNFRuns, m.Reboots
	r.Counts = v.Counts(tb)
	return r
}

// AnsibleEnv is how the playbook runs: pipelining on (modules go through
// the SSH session's stdin, no temporary files or sftp for them), one
// ControlMaster connection kept for 60 s and reused by every task, no host
// key checks (lab VMs make fresh keys), and the interpreter fixed so no
// discovery round trip is spent.
func AnsibleEnv(dir string) []string {
	return []string{
		"ANSIBLE_PIPELINING=True",
		"ANSIBLE_HOST_KEY_CHECKING=False",
		"ANSIBLE_SSH_ARGS=-o ControlMaster=auto -o ControlPersist=60s -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o LogLevel=ERROR",
		"ANSIBLE_SSH_CONTROL_PATH_DIR=" + filepath.Join(dir, "cp"),
		"ANSIBLE_LOCAL_TEMP=" + filepath.Join(dir, "tmp"),
		"ANSIBLE_HOME=" + filepath.Join(dir, "home"),
		"ANSIBLE_RETRY_FILES_ENABLED=False",
		"ANSIBLE_NOCOLOR=1",
		"ANSIBLE_FORCE_COLOR=0",
	}
}

// RunAnsible runs the playbook against v with ansible-playbook (Debian's
// ansible-core) and the benchmark key.
func RunAnsible(ctx context.Context, tb testing.TB, v *VM, w *Workload) Result {
	return RunPlaybook(ctx, tb, v, w, Playbook)
}

// RunPlaybook runs playbook like RunAnsible; with the ansible.posix
// collection installed, profile_tasks prints each task's time.
func RunPlaybook(ctx context.Context, tb testing.TB, v *VM, w *Workload, playbook []byte) Result {
	tb.Helper()
	dir, err := os.MkdirTemp("", "bench-ans-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(dir)
	vars, _ := json.Marshal(w.AnsibleVars())
	key := filepath.Join(dir, "key")
	inv := fmt.Sprintf("[build]\n%s ansible_host=%s ansible_user=%s ansible_ssh_private_key_file=%s ansible_python_interpreter=/usr/bin/python3\n",
		v.Name, v.IP, lab.SSHUser, key)
	for f, data := range map[string][]byte{"key": v.Key.PEM, "vars.json": vars, "hosts": []byte(inv), "fatimage.yml": playbook} {
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	cmd := exec.CommandContext(ctx, "/usr/bin/ansible-playbook", "-i", filepath.Join(dir, "hosts"), "-e", "@"+filepath.Join(dir, "vars.json"), filepath.Join(dir, "fatimage.yml"))
	cmd.Env = append(os.Environ(), AnsibleEnv(dir)...)
	cmd.Env = append(cmd.Env, "PATH=/usr/bin:/bin:/usr/sbin:/sbin")
	if profileTasks() {
		cmd.Env = append(cmd.Env, "ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks")
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		tb.Fatalf("ansible-playbook on %s: %v\n%s", v.Name, err, logtail.Lines(out.String(), 60))
	}
	r := Result{Wall: time.Since(start)}
	r.Counts = v.Counts(tb)
	if os.Getenv("BENCH_VERBOSE") != "" {
		tb.Logf("ansible output:\n%s", out.String())
	}
	return r
}

// profileTasks reports whether the ansible.posix collection (Debian's
// ansible package) provides the profile_tasks callback.
func profileTasks() bool {
	out, err := exec.Command("/usr/bin/ansible-doc", "-t", "callback", "-l").Output()
	return err == nil && bytes.Contains(out, []byte("ansible.posix.profile_tasks"))
}

// Recording is what the provisioner sent: uploads and commands, in order.
type Recording struct {
	mu     sync.Mutex
	Events []Event
}

// Event is an upload (Path, Data) or a command (Command) with what it
// read on stdin (Stdin: the provisioner sends credentials that way).
type Event struct {
	Path    string
	Data    []byte
	Command string
	Stdin   []byte
}

type recordingComm struct {
	packersdk.Communicator
	rec *Recording
}

func (c *recordingComm) Start(ctx context.Context, cmd *packersdk.RemoteCmd) error {
	e := Event{Command: cmd.Command}
	if cmd.Stdin != nil {
		data, err := io.ReadAll(cmd.Stdin)
		if err != nil {
			return err
		}
		e.Stdin = data
		cmd.Stdin = bytes.NewReader(data)
	}
	c.rec.mu.Lock()
	c.rec.Events = append(c.rec.Events, e)
	c.rec.mu.Unlock()
	return c.Communicator.Start(ctx, cmd)
}

func (c *recordingComm) Upload(dst string, r io.Reader, fi *os.FileInfo) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	c.rec.mu.Lock()
	c.rec.Events = append(c.rec.Events, Event{Path: dst, Data: data})
	c.rec.mu.Unlock()
	return c.Communicator.Upload(dst, bytes.NewReader(data), fi)
}

const bootIDCmd = "cat /proc/sys/kernel/random/boot_id"

// FloorScripts turns a recording into the bare work: one shell script per
// boot. Files are written from here-documents, commands run as they were
// sent; the provisioner's own plumbing (asking the login user's name,
// polling the boot id) is left out, and the reboot becomes an immediate
// `systemctl reboot` at the end of the first script.
func (r *Recording) FloorScripts() []string {
	var scripts []string
	var b strings.Builder
	b.WriteString("set -e\n")
	skipNext := false
	for _, e := range r.Events {
		switch {
		case e.Command == "":
			if bytes.Contains(e.Data, []byte("systemctl reboot || reboot")) {
				skipNext = true // the reboot script and the command running it
				continue
			}
			fmt.Fprintf(&b, "base64 -d > %s <<'__FLOOR_EOF__'\n%s\n__FLOOR_EOF__\n", shQuote(e.Path), base64.StdEncoding.EncodeToString(e.Data))
		case skipNext || inlineScriptContains(e.Command, "\nsystemctl reboot || reboot\n"):
			skipNext = false
			b.WriteString("sudo -n systemctl reboot\n")
			scripts = append(scripts, b.String())
			b.Reset()
			b.WriteString("set -e\n")
		case e.Command == "id -un" || e.Command == bootIDCmd:
		case e.Stdin != nil:
			// what the command read on stdin, from a file the floor
			// writes first (the floor's one session has no other stdin)
			fmt.Fprintf(&b, "base64 -d > /tmp/floor-stdin <<'__FLOOR_EOF__'\n%s\n__FLOOR_EOF__\n{ %s\n} < /tmp/floor-stdin\nrm -f /tmp/floor-stdin\n",
				base64.StdEncoding.EncodeToString(e.Stdin), e.Command)
		default:
			b.WriteString(e.Command + "\n")
		}
	}
	return append(scripts, b.String())
}

// inlineScriptContains reports whether command writes a script (the
// provisioner sends small scripts base64-encoded inside the command that
// runs them) containing s.
func inlineScriptContains(command, s string) bool {
	_, rest, ok := strings.Cut(command, "printf %s ")
	if !ok {
		return false
	}
	enc, _, _ := strings.Cut(rest, " ")
	data, err := base64.StdEncoding.DecodeString(enc)
	return err == nil && bytes.Contains(data, []byte(s))
}

// RunFloor runs the floor scripts on v, each in one SSH session with the
// benchmark key; after a reboot the next session starts as soon as sshd
// answers with a new boot id (polled every 100 ms).
func RunFloor(ctx context.Context, tb testing.TB, v *VM, scripts []string) Result {
	tb.Helper()
	cfg := &ssh.ClientConfig{User: lab.SSHUser, Auth: []ssh.AuthMethod{ssh.PublicKeys(v.Key.Signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 2 * time.Second}
	var r Result
	start := time.Now()
	prevBoot := ""
	for i, s := range scripts {
		if i > 0 {
			r.Reboots++
			// the session's script checks the boot id itself and exits 99
			// while the old boot still answers
			s = fmt.Sprintf("[ \"$(cat /proc/sys/kernel/random/boot_id)\" != %s ] || exit 99\n", shQuote(prevBoot)) + s
		}
		if i < len(scripts)-1 {
			s = "cat /proc/sys/kernel/random/boot_id >&2\n" + s
		}
		for {
			if ctx.Err() != nil {
				tb.Fatal(ctx.Err())
			}
			out, stderr, code, err := runOnce(v.IP, cfg, s)
			if err != nil || code == 99 {
				if i == 0 && err != nil {
					tb.Fatalf("floor: %v", err)
				}
				time.Sleep(100 * time.Millisecond)
				continue
			}
			if i < len(scripts)-1 {
				prevBoot = strings.SplitN(stderr, "\n", 2)[0]
				if code != 0 && code != -1 { // -1: the connection dropped at the reboot
					tb.Fatalf("floor script %d exited %d:\n%s\n%s", i, code, logtail.Lines(out, 20), logtail.Lines(stderr, 20))
				}
			} else if code != 0 {
				tb.Fatalf("floor script %d exited %d:\n%s\n%s", i, code, logtail.Lines(out, 20), logtail.Lines(stderr, 20))
			}
			break
		}
	}
	r.Wall = time.Since(start)
	r.Counts = v.Counts(tb)
	return r
}

// runOnce runs script in one session of a new connection; code -1 means
// the session ended without an exit status (the VM rebooted).
func runOnce(ip string, cfg *ssh.ClientConfig, script string) (string, string, int, error) {
	c, err := ssh.Dial("tcp", ip+":22", cfg)
	if err != nil {
		return "", "", 0, err
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		return "", "", 0, err
	}
	defer s.Close()
	var out, stderr bytes.Buffer
	s.Stdout, s.Stderr = &out, &stderr
	s.Stdin = strings.NewReader(script)
	err = s.Run("sh -s")
	switch e := err.(type) {
	case nil:
		return out.String(), stderr.String(), 0, nil
	case *ssh.ExitError:
		return out.String(), stderr.String(), e.ExitStatus(), nil
	case *ssh.ExitMissingError:
		return out.String(), stderr.String(), -1, nil
	default:
		return out.String(), stderr.String(), -1, nil
	}
}
