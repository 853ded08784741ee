package fatimage

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
	"github.com/hashicorp/packer-plugin-sdk/template/interpolate"
)

// Running scripts and staging files on the VM: one SSH session per step.

func (p *Provisioner) makeWorkDir(ctx context.Context) error {
	if p.workDir == "" {
		var b [6]byte
		rand.Read(b[:])
		p.workDir = path.Join(p.config.RemoteFolder, "fatimage-"+hex.EncodeToString(b[:]))
	}
	// private to the login user: uploaded files may carry credentials
	_, err := p.runPlain(ctx, "umask 077 && mkdir -p "+shQuote(p.workDir)+" && chmod 0700 "+shQuote(p.workDir))
	return err
}

func (p *Provisioner) upload(dst string, content []byte) error {
	return p.comm.Upload(dst, bytes.NewReader(content), nil)
}

// staged is a file put into the work dir for a step's script.
type staged struct {
	Name string // relative to the work dir
	Data []byte
}

// stage uploads files into the work dir as one tar archive (one SSH
// session however many files) and returns the script lines unpacking it;
// they are 0600, like everything in the private work dir.
func (p *Provisioner) stage(files ...staged) (string, error) {
	if len(files) == 0 {
		return "", nil
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.Name, Mode: 0o600, Size: int64(len(f.Data)), Typeflag: tar.TypeReg}); err != nil {
			return "", err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	p.seq++
	bundle := path.Join(p.workDir, fmt.Sprintf("%02d-files.tar", p.seq))
	if err := p.upload(bundle, buf.Bytes()); err != nil {
		return "", fmt.Errorf("uploading %s: %w", files[0].Name, err)
	}
	return fmt.Sprintf("tar -xf %s -C \"$FATIMAGE_WORKDIR\" --no-same-owner && rm -f %s\n", shQuote(bundle), shQuote(bundle)), nil
}

// tailBuffer keeps everything written, for the tail on failure.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.Write(b)
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// errCmd is a remote command that failed.
type errCmd struct {
	Step, Command string
	Status        int
	Tail          string
}

func (e *errCmd) Error() string {
	what := fmt.Sprintf("exited with status %d", e.Status)
	if e.Status == packersdk.CmdDisconnect {
		what = "was cut off: the SSH connection to the VM was lost (it rebooted, was reset or stopped)"
	}
	msg := fmt.Sprintf("fatimage %s: %s %s; last output:\n%s", e.Step, e.Command, what, e.Tail)
	if refusedCredentials(e.Tail) {
		msg += "\nthe repository refused the credentials: check repo_username and repo_password (or ARK_USERNAME and ARK_PASSWORD)"
	}
	return msg
}

// refusedCredentials reports whether dnf output shows a repository
// answering 401 or 403.
func refusedCredentials(out string) bool {
	return strings.Contains(out, "Status code: 401") || strings.Contains(out, "Status code: 403")
}

// run starts command and waits, returning stdout; stderr and stdout both
// feed the failure tail.
func (p *Provisioner) run(ctx context.Context, step, command string, stream bool) (string, error) {
	return p.runShown(ctx, step, command, command, stream)
}

// runShown is run naming the command as shown in errors.
func (p *Provisioner) runShown(ctx context.Context, step, command, shown string, stream bool) (string, error) {
	var stdout, both tailBuffer
	var outW, errW io.Writer = io.MultiWriter(&stdout, &both), &both
	if stream && p.ui != nil {
		outW = io.MultiWriter(outW, &uiWriter{ui: p.ui, redact: p.redact})
		errW = io.MultiWriter(errW, &uiWriter{ui: p.ui, redact: p.redact})
	}
	cmd := &packersdk.RemoteCmd{Command: command, Stdout: outW, Stderr: errW}
	if err := p.comm.Start(ctx, cmd); err != nil {
		return "", fmt.Errorf("fatimage %s: starting %q: %w", step, shown, err)
	}
	done := make(chan int, 1)
	go func() { done <- cmd.Wait() }()
	var status int
	select {
	case status = <-done:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	p.dnfRuns += countDNF(both.String())
	if status != 0 {
		all := p.redact(both.String())
		e := &errCmd{Step: step, Command: shown, Status: status, Tail: tail(all, 20)}
		if failing := failingCommand(all); failing != "" {
			e.Command = failing
		}
		return stdout.String(), e
	}
	return stdout.String(), nil
}

func (p *Provisioner) runPlain(ctx context.Context, command string) (string, error) {
	return p.run(ctx, "command", command, false)
}

// runScript uploads script into the work dir and runs it with
// execute_command. Failures name the failing command inside the script.
func (p *Provisioner) runScript(ctx context.Context, step, script string) (string, error) {
	return p.runScriptMode(ctx, step, script, true)
}

func (p *Provisioner) runScriptQuiet(ctx context.Context, step, script string) (string, error) {
	return p.runScriptMode(ctx, step, script, false)
}

// inlineScriptMax is the largest script sent inside the command itself;
// larger ones are uploaded first (a second SSH session).
const inlineScriptMax = 64 << 10

func (p *Provisioner) runScriptMode(ctx context.Context, step, script string, stream bool) (string, error) {
	p.seq++
	remote := path.Join(p.workDir, fmt.Sprintf("%02d-%s.sh", p.seq, step))
	full := scriptPrelude(p.workDir, p.loginUser) + script
	cmd, err := p.executeCommand(remote)
	if err != nil {
		return "", err
	}
	// One session per step: the script (never a secret: those travel as
	// uploaded files) is written by the command that runs it.
	remoteCmd := cmd
	if len(full) <= inlineScriptMax {
		remoteCmd = fmt.Sprintf("umask 077 && printf %%s %s | base64 -d > %s && %s",
			base64.StdEncoding.EncodeToString([]byte(full)), shQuote(remote), cmd)
	} else if err := p.upload(remote, []byte(full)); err != nil {
		return "", fmt.Errorf("fatimage %s: uploading script: %w", step, err)
	}
	return p.runShown(ctx, step, remoteCmd, cmd, stream)
}

// scriptPrelude sets the environment and defines fatimage_run, which
// prints a marker line with the command to stderr before running it so a
// failure can name the failing command.
func scriptPrelude(workDir, loginUser string) string {
	return fmt.Sprintf("export LC_ALL=C\nexport FATIMAGE_WORKDIR=%s FATIMAGE_LOGIN_USER=%s\nfatimage_run() { printf '+fatimage: %%s\\n' \"$*\" >&2; \"$@\"; }\n", shQuote(workDir), shQuote(loginUser))
}

// failingCommand returns the last traced command in out.
func failingCommand(out string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if isTrace(lines[i]) {
			return strings.TrimPrefix(strings.TrimLeft(lines[i], "+"), "fatimage: ")
		}
	}
	return ""
}

// redact hides the repository password in remote output (dnf prints it
// when it dumps a repository's configuration).
func (p *Provisioner) redact(s string) string {
	if pw := p.config.RepoPassword; pw != "" {
		s = strings.ReplaceAll(s, pw, "<sensitive>")
	}
	return s
}

// countDNF counts the dnf commands a script ran, from their markers.
func countDNF(out string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if isTrace(l) && strings.HasPrefix(strings.TrimPrefix(strings.TrimLeft(l, "+"), "fatimage: "), "dnf ") {
			n++
		}
	}
	return n
}

// isTrace reports whether line is an xtrace line of our scripts (nested
// levels repeat the leading +).
func isTrace(line string) bool {
	return strings.HasPrefix(line, "+") && strings.HasPrefix(strings.TrimLeft(line, "+"), "fatimage: ")
}

func (p *Provisioner) executeCommand(remote string) (string, error) {
	ictx := p.config.ctx
	ictx.Data = map[string]string{"Path": remote}
	return interpolate.Render(p.config.ExecuteCommand, &ictx)
}

// uiWriter writes whole lines to the ui, hiding trace lines.
type uiWriter struct {
	ui     packersdk.Ui
	redact func(string) string
	mu     sync.Mutex
	buf    []byte
}

func (w *uiWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		if !isTrace(line) {
			w.ui.Message(w.redact(strings.TrimRight(line, "\r")))
		}
	}
	return len(b), nil
}
