package appliance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Target is the build VM as Packer's communicator reaches it (the
// generated data Host, Port, User and SSHPrivateKey or SSHPrivateKeyFile
// that Packer's ansible provisioner reads with use_proxy = false).
type Target struct {
	Host string
	Port int
	User string
	// PrivateKey is the key's PEM; it is written to a private file for the
	// run and removed after it.
	PrivateKey []byte
	// PrivateKeyFile is used when PrivateKey is empty.
	PrivateKeyFile string
	// BecomePassword is given to Ansible as ansible_become_password when set.
	BecomePassword string
}

var (
	hostRE = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)
	userRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
)

func (t Target) check() error {
	var errs []error
	if !hostRE.MatchString(t.Host) {
		errs = append(errs, fmt.Errorf("target host %q: not a host name or address", t.Host))
	}
	if t.Port < 1 || t.Port > 65535 {
		errs = append(errs, fmt.Errorf("target port %d: not a TCP port", t.Port))
	}
	if !userRE.MatchString(t.User) {
		errs = append(errs, fmt.Errorf("target user %q: not a user name", t.User))
	}
	if len(t.PrivateKey) == 0 && t.PrivateKeyFile == "" {
		errs = append(errs, errors.New("target: no private key (neither key nor key file)"))
	}
	return errors.Join(errs...)
}

// invocation is one ansible-playbook run's private directory, arguments
// and environment, composed as the appliance's template composes them.
type invocation struct {
	dir  string
	args []string
	env  []string
}

// prepare writes the run's private files: Packer's inventory (the host in
// builder plus the site's groups) and the connection's secrets as an
// extra-vars file, where Packer passes `-e ansible_ssh_private_key_file`.
func (s *Site) prepare(t Target) (*invocation, error) {
	if err := errors.Join(s.Check(), t.check()); err != nil {
		return nil, err
	}
	env, err := s.env()
	if err != nil {
		return nil, err
	}
	if err := sshDir(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "fatimage-appliance-")
	if err != nil {
		return nil, err
	}
	inv := &invocation{dir: dir, env: env}
	if err := inv.write(s, t); err != nil {
		inv.close()
		return nil, err
	}
	return inv, nil
}

// sshDir makes ~/.ssh when missing: the appliance's ansible.cfg puts
// ssh's ControlPath there, and ssh does not make the directory itself (a
// deploy host has it; a fresh CI runner or root may not).
func sshDir() error {
	home, err := os.UserHomeDir()
	if err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

func (inv *invocation) write(s *Site, t Target) error {
	host := fmt.Sprintf("%s ansible_host=%s ansible_user=%s ansible_port=%d\n", HostAlias, t.Host, t.User, t.Port)
	ini := host
	for _, g := range append([]string{"builder"}, s.Groups...) {
		ini += "[" + g + "]\n" + host
	}
	if err := inv.file("inventory", []byte(ini)); err != nil {
		return err
	}
	key := t.PrivateKeyFile
	if len(t.PrivateKey) > 0 {
		key = filepath.Join(inv.dir, "ssh-key")
		if err := inv.file("ssh-key", t.PrivateKey); err != nil {
			return err
		}
	}
	conn := map[string]*yaml.Node{"ansible_ssh_private_key_file": unsafeString(key)}
	if t.BecomePassword != "" {
		conn["ansible_become_password"] = unsafeString(t.BecomePassword)
	}
	data, err := yaml.Marshal(conn)
	if err != nil {
		return err
	}
	if err := inv.file("connection.yml", data); err != nil {
		return err
	}
	// The order of the appliance's command line: the composed inventory,
	// the extra vars, then Packer's key and inventory.
	inv.args = []string{
		"--ssh-extra-args", "-o IdentitiesOnly=yes",
		"--limit", "builder",
		"-i", filepath.Join(s.Repo, "packer", "ansible-inventory.sh"),
		"-e", "@" + filepath.Join(s.Repo, "packer", "openhpc_extravars.yml"),
		"-e", "@" + filepath.Join(inv.dir, "connection.yml"),
		"-i", filepath.Join(inv.dir, "inventory"),
	}
	return nil
}

// unsafeString is a YAML string Ansible never templates (a password may
// hold "{{").
func unsafeString(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!unsafe", Value: s, Style: yaml.DoubleQuotedStyle}
}

func (inv *invocation) file(name string, data []byte) error {
	return os.WriteFile(filepath.Join(inv.dir, name), data, 0o600)
}

// close removes the run's private files (the key among them).
func (inv *invocation) close() { _ = os.RemoveAll(inv.dir) }

// playbook runs ansible-playbook on a playbook with the composed
// arguments; its output goes to out. The error carries the end of the
// output, where Ansible says what failed.
func (inv *invocation) playbook(ctx context.Context, s *Site, out io.Writer, extra ...string) error {
	args := append(append([]string{}, inv.args...), extra...)
	cmd := exec.CommandContext(ctx, s.command("ansible-playbook"), args...)
	// Packer runs from the checkout's packer directory (the template's usage note).
	cmd.Dir = filepath.Join(s.Repo, "packer")
	cmd.Env = inv.env
	stopAsGroup(cmd)
	cmd.WaitDelay = 10 * time.Second
	tail := &tailBuffer{max: 4096}
	cmd.Stdout = io.MultiWriter(out, tail)
	cmd.Stderr = cmd.Stdout
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w\n%s", filepath.Base(cmd.Path), err, strings.TrimSpace(tail.String()))
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = b.buf[len(b.buf)-b.max:]
	}
	return len(p), nil
}

func (b *tailBuffer) String() string { return string(b.buf) }

// address is the target, for messages.
func (t Target) address() string { return t.Host + ":" + strconv.Itoa(t.Port) }
