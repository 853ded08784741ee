package lab_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// TestSecurityGroupsGuestView: security groups as the guest sees them,
// made with the official CLI. A server in a group opening TCP 22 only
// answers SSH from the host; a port its guest listens on (and reaches
// itself) gets no answer at all from the host, dropped on the host side
// of its port, until a rule added at runtime opens it. When the server
// goes, its filter goes with it.
func TestSecurityGroupsGuestView(t *testing.T) {
	labtest.Require(t)
	needs.Tools(t, "openstack", "iptables-save")
	key := filepath.Join(t.TempDir(), "id")
	// a failed check must not leave these to fail the next tests' leak
	// checks; the deletes below make this a no-op when the test passes
	t.Cleanup(func() {
		for _, args := range [][]string{{"server", "delete", "--wait", "sg-server"}, {"security", "group", "delete", "sg-ssh"}, {"keypair", "delete", "sg-key"}} {
			_ = openstackCmd(args...).Run()
		}
	})
	openstack(t, nil, "keypair", "create", "--private-key", key, "sg-key")
	openstack(t, nil, "security", "group", "create", "sg-ssh")
	openstack(t, nil, "security", "group", "rule", "create", "--ingress", "--protocol", "tcp", "--dst-port", "22", "sg-ssh")
	var server map[string]any
	openstack(t, &server, "server", "create", "--image", lab.BaseImageName, "--flavor", "m1.small", "--network", "lab-net",
		"--key-name", "sg-key", "--security-group", "sg-ssh", "--wait", "-f", "json", "sg-server")
	fixed := ipv4.FindString(fmt.Sprint(server["addresses"]))
	if fixed == "" {
		t.Fatalf("no address in %v", server["addresses"])
	}
	// the server's chain: the one its fixed address leads to (other
	// packages' labs run VMs with chains of their own at the same time)
	own := chainsTo(t, fixed)
	if len(own) != 1 {
		t.Fatalf("the chains for %s on the host: %v, want one", fixed, own)
	}
	ssh := labtest.SSH(t, fixed, lab.SSHUser, key, 3*time.Minute) // boots are slow under load
	ssh.Run(t, "setsid python3 -m http.server --bind 0.0.0.0 8080 </dev/null >/dev/null 2>&1 &")
	ssh.Run(t, "for i in $(seq 100); do curl -fsS -o /dev/null http://"+fixed+":8080/ && exit 0; sleep 0.2; done; exit 1")
	ssh.Close()

	if err := labtest.DialTCP(fixed+":8080", 3*time.Second); !labtest.Dropped(err) {
		t.Errorf("a port the group does not open: %v, want no answer (dropped, not refused)", err)
	}
	openstack(t, nil, "security", "group", "rule", "create", "--ingress", "--protocol", "tcp", "--dst-port", "8080", "sg-ssh")
	if err := labtest.DialTCP(fixed+":8080", 3*time.Second); err != nil {
		t.Errorf("the port a rule opened at runtime: %v", err)
	}

	openstack(t, nil, "server", "delete", "--wait", "sg-server")
	openstack(t, nil, "security", "group", "delete", "sg-ssh")
	openstack(t, nil, "keypair", "delete", "sg-key")
	labtest.RequireClean(t, theLab)
	// the double forgets the server, then destroys its VM
	for deadline := time.Now().Add(10 * time.Second); slices.Contains(filterChains(t), own[0]); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server's chain %s is still on the host after it went", own[0])
		}
	}
}

// filterChains are the VMs' ingress chains on the host (one a filtered
// VM).
func filterChains(t *testing.T) []string {
	t.Helper()
	var chains []string
	for _, line := range strings.Split(iptablesFilter(t), "\n") {
		if strings.HasPrefix(line, ":fli-") {
			chains = append(chains, strings.Fields(line)[0][1:])
		}
	}
	return chains
}

// chainsTo are the ingress chains the host's rules send addr's traffic
// to (a VM's fla- chain jumps to its fli- one by destination).
func chainsTo(t *testing.T, addr string) []string {
	t.Helper()
	var chains []string
	for _, line := range strings.Split(iptablesFilter(t), "\n") {
		f := strings.Fields(line)
		if len(f) == 6 && f[0] == "-A" && strings.HasPrefix(f[1], "fla-") && f[2] == "-d" && f[3] == addr+"/32" && f[4] == "-j" {
			chains = append(chains, f[5])
		}
	}
	return chains
}

func iptablesFilter(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("iptables-save", "-t", "filter").Output()
	if err != nil {
		t.Fatalf("iptables-save: %v", err)
	}
	return string(out)
}
