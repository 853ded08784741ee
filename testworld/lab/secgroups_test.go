package lab_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
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
	before := filterChains(t)
	key := filepath.Join(t.TempDir(), "id")
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
	if after := filterChains(t); after != before {
		t.Errorf("the host's security group chains: %d before the server, %d after it went", before, after)
	}
}

// filterChains counts the VMs' security group chains on the host.
func filterChains(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("iptables-save", "-t", "filter").Output()
	if err != nil {
		t.Fatalf("iptables-save: %v", err)
	}
	return strings.Count(string(out), "\n:fli-")
}
