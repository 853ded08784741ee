package vm

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

func TestFirewallRestore(t *testing.T) {
	got := firewallRestore("flv1", []string{"10.1.0.5", "172.24.4.9"}, Firewall{
		Ingress: []FirewallRule{{Protocol: "tcp", PortMin: 22, PortMax: 22, Remote: "0.0.0.0/0"}, {Protocol: "icmp", PortMin: 8}, {Remote: "10.1.0.7/32"}},
		Egress:  []FirewallRule{{Protocol: "udp", PortMin: 53, PortMax: 54}},
	})
	for _, want := range []string{
		":fli-flv1 - [0:0]\n:flo-flv1 - [0:0]\n:fla-flv1 - [0:0]\n",
		"-A fli-flv1 -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN\n",
		"-A fli-flv1 -s 0.0.0.0/0 -p tcp --dport 22 -j RETURN\n",
		"-A fli-flv1 -p icmp --icmp-type 8 -j RETURN\n",
		"-A fli-flv1 -s 10.1.0.7/32 -j RETURN\n-A flo-flv1 -p udp --dport 53:54 -j RETURN\n-A fli-flv1 -j DROP\n-A flo-flv1 -j DROP\n",
		"-A fla-flv1 -d 10.1.0.5/32 -j fli-flv1\n-A fla-flv1 -d 172.24.4.9/32 -j fli-flv1\nCOMMIT\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the restore input lacks %q:\n%s", want, got)
		}
	}
}

// TestFirewall filters a namespace's port on a bridge as a machine's
// (in a network namespace of the test's own, so the host's iptables are
// untouched): the host reaches the open port, a port the rules do not
// open is dropped (a timeout, not a refusal), a rule set at runtime opens
// it, egress follows its rules, and removing the filter, or sweeping a
// dead manager's, leaves no chain.
func TestFirewall(t *testing.T) {
	needs.Root(t, "a network namespace with a bridge and iptables")
	needs.Tools(t, "ip", "iptables", "iptables-restore", "iptables-save", "python3")
	done := make(chan struct{})
	go func() {
		defer close(done)
		// the thread stays in the new namespace and dies with the goroutine
		runtime.LockOSThread()
		if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
			t.Error(err)
			return
		}
		firewallScenario(t)
	}()
	<-done
}

func firewallScenario(t *testing.T) {
	// the package's registry, restored for the tests after this one (a
	// manager recording into a removed directory is never swept)
	saved := registryDir
	registryDir = t.TempDir()
	defer func() { registryDir = saved }()
	guest := "fatlab-fwtest-" + randHex(3)
	if err := fwTestNet(guest); err != nil {
		t.Error(err)
		return
	}
	defer func() { _ = exec.Command("ip", "netns", "del", guest).Run() }()
	srv := exec.Command("ip", "netns", "exec", guest, "python3", "-c", fwTestServer)
	if err := srv.Start(); err != nil {
		t.Error(err)
		return
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	m := &Manager{opts: ManagerOptions{Network: NetworkOptions{Bridge: "fwbr"}}, reg: newRegistry("fwtest")}
	vm := &Machine{m: m, spec: MachineSpec{ID: "fwtest", FixedIP: "10.77.0.10"}, veth: "fwv0",
		fw: &Firewall{Ingress: []FirewallRule{{Protocol: "tcp", PortMin: 22, PortMax: 22}}, Egress: []FirewallRule{{}}}}
	if err := vm.applyFirewall(); err != nil {
		t.Error(err)
		return
	}
	waitDial(t, "10.77.0.10:22")
	wantDropped(t, "10.77.0.10:8080", "a port the group does not open")
	hostLn, err := net.Listen("tcp", "10.77.0.1:0")
	if err != nil {
		t.Error(err)
		return
	}
	defer hostLn.Close()
	go acceptAll(hostLn)
	if err := guestDial(guest, hostLn.Addr().String()); err != nil {
		t.Errorf("egress to anywhere: %v", err)
	}
	if err := vm.SetFirewall(&Firewall{Ingress: []FirewallRule{{Protocol: "tcp", PortMin: 22, PortMax: 22},
		{Protocol: "tcp", PortMin: 8000, PortMax: 8080, Remote: "10.77.0.0/24"}}}); err != nil {
		t.Error(err)
		return
	}
	if c, err := net.DialTimeout("tcp", "10.77.0.10:8080", 3*time.Second); err != nil {
		t.Errorf("the port a rule opened at runtime: %v", err)
	} else {
		c.Close()
	}
	if err := guestDial(guest, hostLn.Addr().String()); err == nil {
		t.Error("egress without an egress rule went through")
	}
	if err := vm.SetFirewall(&Firewall{Ingress: []FirewallRule{{Protocol: "tcp", PortMin: 8080, PortMax: 8080, Remote: "10.99.0.0/16"}}}); err != nil {
		t.Error(err)
	}
	wantDropped(t, "10.77.0.10:8080", "a port open to another prefix only")
	routedToFloating(t, vm, guest)
	vm.removeFirewall()
	wantNoChains(t, "after removeFirewall")
	if c, err := net.DialTimeout("tcp", "10.77.0.10:8080", 3*time.Second); err != nil {
		t.Errorf("unfiltered again: %v", err)
	} else {
		c.Close()
	}
	// a dead manager's filter goes with the sweep
	if err := vm.SetFirewall(&Firewall{}); err != nil {
		t.Error(err)
	}
	rec := registryRecord{PID: deadPID(t), Start: "1", Firewalls: map[string][][]string{"fwv0": firewallJumps("fwv0", "fwbr")}}
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(registryDir, "dead.json"), b, 0o644); err != nil {
		t.Error(err)
	}
	sweepStaleIn(registryDir, t.Logf)
	wantNoChains(t, "after the sweep")
}

// fwTestServer accepts on 22 and 8080 until killed.
const fwTestServer = `
import socket, threading
def serve(port):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port)); s.listen(8)
    while True:
        c, _ = s.accept(); c.close()
for p in (22, 8080):
    threading.Thread(target=serve, args=(p,), daemon=True).start()
threading.Event().wait()
`

// fwTestNet makes the bridge fwbr (10.77.0.1) in the test's namespace
// and the guest namespace at 10.77.0.10 on it through fwv0.
func fwTestNet(guest string) error {
	g := func(args ...string) []string { return append([]string{"-n", guest}, args...) }
	for _, c := range [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", "name", "fwbr", "type", "bridge"},
		{"addr", "add", "10.77.0.1/24", "dev", "fwbr"},
		{"link", "set", "fwbr", "up"},
		{"netns", "add", guest},
		{"link", "add", "fwv0", "type", "veth", "peer", "name", "eth0", "netns", guest},
		{"link", "set", "fwv0", "master", "fwbr"},
		{"link", "set", "fwv0", "up"},
		g("link", "set", "lo", "up"),
		g("link", "set", "eth0", "up"),
		g("addr", "add", "10.77.0.10/24", "dev", "eth0"),
	} {
		if err := run("ip", c...); err != nil {
			return err
		}
	}
	return nil
}

func waitDial(t *testing.T, addr string) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var c net.Conn
		if c, err = net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
			c.Close()
			return
		}
	}
	t.Errorf("the open port %s: %v", addr, err)
}

// wantDropped wants a connection to addr to get no answer at all.
func wantDropped(t *testing.T, addr, what string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 1500*time.Millisecond)
	if err == nil {
		c.Close()
		t.Errorf("%s (%s): connected", what, addr)
		return
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("%s (%s): %v, want no answer (a timeout), not a refusal", what, addr, err)
	}
}

func guestDial(guest, addr string) error {
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command("ip", "netns", "exec", guest, "python3", "-c",
		"import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 1.5).close()", host, port).CombinedOutput()
	if err != nil {
		return errors.New(strings.TrimSpace(string(out)))
	}
	return nil
}

func acceptAll(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

func wantNoChains(t *testing.T, when string) {
	t.Helper()
	out, err := exec.Command("iptables-save", "-t", "filter").CombinedOutput()
	if err != nil {
		t.Errorf("iptables-save: %v: %s", err, out)
	}
	if strings.Contains(string(out), "fwv0") {
		t.Errorf("%s, the filter is still there:\n%s", when, out)
	}
}

func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Error(err)
	}
	return cmd.Process.Pid
}

// routedToFloating: a second guest's connection to the machine's floating
// IP, which the host routes (no bridge port's hook sees it), meets the
// machine's filter: 22 (opened for the peer) answers, 8080 is dropped.
func routedToFloating(t *testing.T, vm *Machine, guest string) {
	t.Helper()
	peer := guest + "-b"
	g := func(args ...string) []string { return append([]string{"-n", peer}, args...) }
	for _, c := range [][]string{
		{"netns", "add", peer},
		{"link", "add", "fwv1", "type", "veth", "peer", "name", "eth0", "netns", peer},
		{"link", "set", "fwv1", "master", "fwbr"},
		{"link", "set", "fwv1", "up"},
		g("link", "set", "eth0", "up"),
		g("addr", "add", "10.77.0.11/24", "dev", "eth0"),
		g("route", "add", "default", "via", "10.77.0.1"),
		{"-n", guest, "addr", "add", "10.88.0.10/32", "dev", "eth0"},
		{"route", "add", "10.88.0.10/32", "via", "10.77.0.10", "dev", "fwbr"},
	} {
		if err := run("ip", c...); err != nil {
			t.Error(err)
			return
		}
	}
	defer func() { _ = exec.Command("ip", "netns", "del", peer).Run() }()
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1\n"), 0o644); err != nil {
		t.Error(err)
		return
	}
	vm.mu.Lock()
	vm.fips = append(vm.fips, "10.88.0.10")
	vm.mu.Unlock()
	if err := vm.SetFirewall(&Firewall{Ingress: []FirewallRule{{Protocol: "tcp", PortMin: 22, PortMax: 22, Remote: "10.77.0.11/32"}}}); err != nil {
		t.Error(err)
		return
	}
	if err := guestDial(peer, "10.88.0.10:22"); err != nil {
		t.Errorf("the peer to the floating IP's open port: %v", err)
	}
	if err := guestDial(peer, "10.88.0.10:8080"); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("the peer to the floating IP's closed port: %v, want a timeout", err)
	}
}
