package bench

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// sessionWrapper is the forced command of the benchmark key: it logs one
// line per SSH session (exec or subsystem channel) and then runs what the
// client asked for. $SSH_CONNECTION tells TCP connections apart.
const sessionWrapper = `#!/bin/bash
printf '%s\t%s\t%s\n' "$EPOCHREALTIME" "$SSH_CONNECTION" "${SSH_ORIGINAL_COMMAND:-<login shell>}" >> /var/lib/bench/sessions.log
case "$SSH_ORIGINAL_COMMAND" in
"") exec -l /bin/bash ;;
/usr/lib/openssh/sftp-server|internal-sftp) exec /usr/lib/openssh/sftp-server ;;
*) exec /bin/bash -c "$SSH_ORIGINAL_COMMAND" ;;
esac
`

// dnfCounter logs every Python process that imports dnf: the dnf command
// line tool and Ansible's dnf module alike, so both are counted the same
// way. It is loaded through a .pth file in the VM's dist-packages.
const dnfCounter = `import os, sys

class _BenchDNFCounter:
    def find_spec(self, name, path=None, target=None):
        if name == "dnf":
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            try:
                with open("/var/lib/bench/dnf.log", "a") as f:
                    f.write("%d\t%s\n" % (os.getpid(), " ".join(sys.argv)[:300]))
            except OSError:
                pass
        return None

sys.meta_path.insert(0, _BenchDNFCounter())
`

// Counts are what a VM's counters logged.
type Counts struct {
	Sessions    int // SSH exec/subsystem sessions of the benchmark key
	Connections int // distinct TCP connections they came on
	DNF         int // processes that ran dnf (CLI or Python API)
	SessionLog  []string
	DNFLog      []string
}

// Key is the benchmark's SSH key: its public half is installed with the
// counting forced command.
type Key struct {
	Signer ssh.Signer
	PEM    []byte
	Public string
}

// NewKey makes an ed25519 key.
func NewKey(tb testing.TB) *Key {
	tb.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		tb.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "bench")
	if err != nil {
		tb.Fatal(err)
	}
	sp, _ := ssh.NewPublicKey(pub)
	return &Key{Signer: signer, PEM: pem.EncodeToMemory(block), Public: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp)))}
}

// InstallCounters installs the session wrapper and dnf counter on v and
// authorizes k with the wrapper as its forced command (first in
// authorized_keys, so sshd picks that line for k).
func (v *VM) InstallCounters(tb testing.TB, k *Key) {
	tb.Helper()
	v.Key = k
	py := "/usr/local/lib/python3.11/dist-packages"
	v.Run(tb, "sudo -n install -d -m 1777 /var/lib/bench && sudo -n install -d -m 0755 /usr/local/libexec "+py)
	v.WriteFile(tb, "/usr/local/libexec/bench-session", sessionWrapper, "0755")
	v.WriteFile(tb, py+"/bench_dnf_counter.py", dnfCounter, "0644")
	v.WriteFile(tb, py+"/bench-dnf-counter.pth", "import bench_dnf_counter\n", "0644")
	line := `command="/usr/local/libexec/bench-session" ` + k.Public
	v.Run(tb, "f=$HOME/.ssh/authorized_keys; { echo "+shQuote(line)+"; cat \"$f\"; } > \"$f.new\" && mv \"$f.new\" \"$f\" && chmod 600 \"$f\"")
	v.ResetCounts(tb)
}

// WriteFile writes content to path as root with mode.
func (v *VM) WriteFile(tb testing.TB, path, content, mode string) {
	tb.Helper()
	v.Run(tb, "printf '%s' "+shQuote(content)+" | sudo -n install -D -m "+mode+" /dev/stdin "+shQuote(path))
}

// ResetCounts empties the logs.
func (v *VM) ResetCounts(tb testing.TB) {
	tb.Helper()
	v.Run(tb, ": > /var/lib/bench/sessions.log; : > /var/lib/bench/dnf.log; chmod 666 /var/lib/bench/*.log")
}

// Counts reads the logs.
func (v *VM) Counts(tb testing.TB) Counts {
	tb.Helper()
	s := v.Run(tb, "cat /var/lib/bench/sessions.log")
	d := v.Run(tb, "cat /var/lib/bench/dnf.log")
	return ParseCounts(s, d)
}

// ParseCounts counts the session and dnf logs' lines.
func ParseCounts(sessions, dnf string) Counts {
	var c Counts
	conns := map[string]bool{}
	for _, l := range strings.Split(sessions, "\n") {
		f := strings.Split(l, "\t")
		if len(f) < 3 {
			continue
		}
		c.Sessions++
		c.SessionLog = append(c.SessionLog, l)
		// SSH_CONNECTION is "client-ip client-port server-ip server-port"
		conns[f[1]] = true
	}
	c.Connections = len(conns)
	for _, l := range strings.Split(dnf, "\n") {
		if pid, _, ok := strings.Cut(l, "\t"); ok {
			if _, err := strconv.Atoi(pid); err == nil {
				c.DNF++
				c.DNFLog = append(c.DNFLog, l)
			}
		}
	}
	return c
}
