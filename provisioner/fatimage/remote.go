package fatimage

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
	"github.com/hashicorp/packer-plugin-sdk/template/interpolate"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
)

// Running scripts and staging files on the VM: one SSH session per step.

func (s *state) makeWorkDir(ctx context.Context) error {
	if s.workDir == "" {
		var b [6]byte
		rand.Read(b[:])
		s.workDir = path.Join(s.cfg.RemoteFolder, "fatimage-"+hex.EncodeToString(b[:]))
	}
	// private to the login user: uploaded files may carry credentials
	_, err := s.runPlain(ctx, "umask 077 && "+shellCommand("mkdir", "-p", s.workDir)+" && "+shellCommand("chmod", "0700", s.workDir))
	return err
}

func (s *state) upload(dst string, content []byte) error {
	return s.comm.Upload(dst, bytes.NewReader(content), nil)
}

// staged is a file put into the work dir for a step's script.
type staged struct {
	Name string // relative to the work dir
	Data []byte
}

// stage uploads files into the work dir as one tar archive (one SSH
// session however many files) and adds the call unpacking it to sc; they
// are 0600, like everything in the private work dir. Never for
// credentials: those are the script's secrets (vmScript.secret).
func (s *state) stage(sc *vmScript, files ...staged) error {
	if len(files) == 0 {
		return nil
	}
	buf, err := tarFiles(files)
	if err != nil {
		return err
	}
	s.seq++
	bundle := path.Join(s.workDir, fmt.Sprintf("%02d-files.tar", s.seq))
	if err := s.upload(bundle, buf); err != nil {
		return fmt.Errorf("uploading %s: %w", files[0].Name, err)
	}
	sc.call("unpack_bundle", bundle)
	return nil
}

// tarFiles is files as a tar archive of 0600 files.
func tarFiles(files []staged) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.Name, Mode: 0o600, Size: int64(len(f.Data)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// syncBuffer is a bytes.Buffer the stdout and stderr copiers of one
// session can write at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func tail(s string, n int) string { return content.Tail(s, n) }

// cmdError is a remote command that failed. Its first lines are the
// causes when they are known (from the script or from dnf's output).
type cmdError struct {
	Step, Command string
	Status        int
	Causes        []string
	Tail          string
}

func (e *cmdError) Error() string {
	var b strings.Builder
	for _, c := range e.Causes {
		b.WriteString(c + "\n")
	}
	what := fmt.Sprintf("exited with status %d", e.Status)
	if e.Status == packersdk.CmdDisconnect {
		what = "was cut off: the SSH connection to the VM was lost (it rebooted, was reset or stopped)"
	}
	fmt.Fprintf(&b, "fatimage %s: %s %s; last output:\n%s", e.Step, e.Command, what, e.Tail)
	return b.String()
}

// run starts command and waits, returning stdout; stderr and stdout both
// feed the error.
func (s *state) run(ctx context.Context, step, command string, stream bool) (string, error) {
	return s.runShown(ctx, step, command, command, stream)
}

// runShown is run naming the command as shown in errors.
func (s *state) runShown(ctx context.Context, step, command, shown string, stream bool) (string, error) {
	return s.runStdin(ctx, step, command, shown, stream, nil)
}

// runStdin is runShown feeding stdin to the command.
func (s *state) runStdin(ctx context.Context, step, command, shown string, stream bool, stdin io.Reader) (string, error) {
	var stdout, both syncBuffer
	var outW, errW io.Writer = io.MultiWriter(&stdout, &both), &both
	if stream && s.ui != nil {
		outW = io.MultiWriter(outW, &uiWriter{ui: s.ui, redact: s.redact})
		errW = io.MultiWriter(errW, &uiWriter{ui: s.ui, redact: s.redact})
	}
	cmd := &packersdk.RemoteCmd{Command: command, Stdin: stdin, Stdout: outW, Stderr: errW}
	if err := s.comm.Start(ctx, cmd); err != nil {
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
	s.dnfRuns += countDNF(both.String())
	if status != 0 {
		return stdout.String(), s.commandError(step, shown, status, s.redact(both.String()))
	}
	return stdout.String(), nil
}

// commandError explains a failed command from its output: the causes a
// script gave, else what dnf's output says, else the last command the
// script traced.
func (s *state) commandError(step, shown string, status int, out string) *cmdError {
	e := &cmdError{Step: step, Command: shown, Status: status, Tail: tail(out, 20), Causes: scriptCauses(out)}
	if len(e.Causes) > 0 {
		e.Tail = tail(withoutCauses(out), 20) // they head the error
		return e
	}
	if failing := failingCommand(out); failing != "" {
		e.Command = failing
		if strings.HasPrefix(failing, "dnf ") {
			e.Causes = diagnoseDNF(out, s.plan.repoIDs())
			e.Tail = tail(dnfShownOutput(out), 20)
		}
	}
	return e
}

func (s *state) runPlain(ctx context.Context, command string) (string, error) {
	return s.run(ctx, "command", command, false)
}

// runScript uploads the script into the work dir and runs it with
// execute_command, its output streamed to the ui. The running step names
// the script and its errors.
func (s *state) runScript(ctx context.Context, sc *vmScript) (string, error) {
	return s.runScriptMode(ctx, s.step, sc, true)
}

// runScriptQuiet is runScript without streaming, the script named step.
func (s *state) runScriptQuiet(ctx context.Context, step string, sc *vmScript) (string, error) {
	return s.runScriptMode(ctx, step, sc, false)
}

// inlineScriptMax is the largest script sent inside the command itself;
// larger ones are uploaded first (a second SSH session).
const inlineScriptMax = 64 << 10

func (s *state) runScriptMode(ctx context.Context, step string, sc *vmScript, stream bool) (string, error) {
	s.seq++
	remote := path.Join(s.workDir, fmt.Sprintf("%02d-%s.sh", s.seq, step))
	if px := s.plan.proxy(); px != nil {
		// every script's downloads go through the site's proxy (appliance_proxy.go)
		sc.addSecret(staged{proxyEnvFile, px.env()})
	}
	full := sc.render(s.workDir, s.loginUser)
	cmd, err := s.executeCommand(remote)
	if err != nil {
		return "", err
	}
	// The script's secrets travel on its stdin, a tar archive the script
	// unpacks into the tmpfs secret dir: never as a file on the disk.
	var stdin io.Reader
	if len(sc.secrets) > 0 {
		b, err := tarFiles(sc.secrets)
		if err != nil {
			return "", err
		}
		stdin = bytes.NewReader(b)
	}
	// One session per step: the script (never a secret: those travel on
	// stdin) is written by the command that runs it.
	remoteCmd := cmd
	if len(full) <= inlineScriptMax {
		remoteCmd = writeScriptCommand(full, remote) + " && " + cmd
	} else if err := s.upload(remote, []byte(full)); err != nil {
		return "", fmt.Errorf("fatimage %s: uploading script: %w", step, err)
	}
	return s.runStdin(ctx, step, remoteCmd, cmd, stream, stdin)
}

// Marker lines of the scripts on stderr (see scripts/prelude.sh); nested
// xtrace levels repeat the leading +.
const (
	traceMarker = "fatimage: "  // after one or more +: a command about to run
	causeMarker = "!fatimage: " // the cause of the failure that follows
)

// failingCommand returns the last traced command in out.
func failingCommand(out string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if isTrace(lines[i]) {
			return strings.TrimPrefix(strings.TrimLeft(lines[i], "+"), traceMarker)
		}
	}
	return ""
}

// scriptCauses returns the causes a script printed.
func scriptCauses(out string) []string {
	var causes []string
	for _, l := range strings.Split(out, "\n") {
		if c, ok := strings.CutPrefix(strings.TrimRight(l, "\r"), causeMarker); ok {
			causes = append(causes, c)
		}
	}
	return causes
}

// withoutCauses is out without its cause lines.
func withoutCauses(out string) string {
	var kept []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, causeMarker) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// redact hides every secret the process knows in remote output (dnf
// prints the password when it dumps a repository's configuration):
// internal/redact, the one filter.
func (s *state) redact(out string) string { return redact.String(out) }

// countDNF counts the dnf commands a script ran, from their markers.
func countDNF(out string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if isTrace(l) && strings.HasPrefix(strings.TrimPrefix(strings.TrimLeft(l, "+"), traceMarker), "dnf ") {
			n++
		}
	}
	return n
}

// isTrace reports whether line is a trace line of our scripts.
func isTrace(line string) bool {
	return strings.HasPrefix(line, "+") && strings.HasPrefix(strings.TrimLeft(line, "+"), traceMarker)
}

func (s *state) executeCommand(remote string) (string, error) {
	ictx := s.cfg.ctx
	ictx.Data = map[string]string{"Path": remote}
	return interpolate.Render(s.cfg.ExecuteCommand, &ictx)
}

// uiWriter writes whole lines to the ui, hiding trace lines and showing
// cause lines without their marker.
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
			w.ui.Message(w.redact(strings.TrimPrefix(strings.TrimRight(line, "\r"), causeMarker))) //nolint:staticcheck // output lines are sub-messages of the step's headline: Message indents them, Say would not
		}
	}
	return len(b), nil
}
