package vm

import (
	"bufio"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReserveNetwork: a lab network is held host-wide by its bridge and
// both subnets: another process cannot take it, a network that reuses one
// of its subnets under another bridge name is refused, ReserveNetwork
// skips it, NewManager refuses a network another process or another
// manager of this process holds. The
// old lab picked a random subnet and, when two labs drew the same one,
// both used one bridge.
func TestReserveNetwork(t *testing.T) {
	requireRoot(t)
	netw := func(prefix string, i int) NetworkOptions {
		return NetworkOptions{Bridge: fmt.Sprintf("%s%03d", prefix, i), CIDR: fmt.Sprintf("10.199.%d.0/24", i),
			Gateway: fmt.Sprintf("10.199.%d.1", i), FloatingCIDR: fmt.Sprintf("172.26.%d.0/24", i)}
	}
	// a network x no other process holds (this test may run in two at once)
	var x int
	for try := 0; ; try++ {
		x = 100 + randInt(100)
		got, err := ReserveNetwork([]NetworkOptions{netw("fvr", x), netw("fvr", x+1), netw("fvr", x+2)})
		if err == nil && got == netw("fvr", x) {
			ReleaseNetwork(got.Bridge)
			break
		}
		if err == nil {
			ReleaseNetwork(got.Bridge)
		}
		if try == 20 {
			t.Fatalf("no free test network: %v", err)
		}
	}
	a, b := netw("fvr", x), netw("fvr", x+1)
	got, err := ReserveNetwork([]NetworkOptions{a, b})
	if err != nil || got != a {
		t.Fatalf("ReserveNetwork = %+v, %v; want %+v", got, err, a)
	}
	defer ReleaseNetwork(a.Bridge)
	lock := func(name string) string { return filepath.Join(netLockDir, strings.ReplaceAll(name, "/", "_")+".lock") }
	for _, name := range []string{"bridge-" + a.Bridge, "net-" + a.CIDR, "net-" + a.FloatingCIDR} {
		if err := exec.Command("flock", "-n", lock(name), "true").Run(); err == nil {
			t.Errorf("another process took %s while this lab holds it", name)
		}
	}
	sameSubnet := netw("fvs", x)
	if _, err := ReserveNetwork([]NetworkOptions{sameSubnet}); !errors.Is(err, ErrNetworkInUse) {
		t.Errorf("a second bridge on subnet %s: %v, want %v", a.CIDR, err, ErrNetworkInUse)
	}
	if got, err := ReserveNetwork([]NetworkOptions{sameSubnet, b}); err != nil || got != b {
		t.Errorf("ReserveNetwork skipping a taken subnet = %+v, %v; want %+v", got, err, b)
	}
	ReleaseNetwork(b.Bridge)

	// this process's own labs: a network it holds is skipped, the manager
	// takes up the reservation, and a second manager on it is refused
	// (two on one bridge: the first to close deleted it under the other's
	// machines, a CI failure)
	if got, err := ReserveNetwork([]NetworkOptions{a, b}); err != nil || got != b {
		t.Errorf("ReserveNetwork skipping this process's network = %+v, %v; want %+v", got, err, b)
	}
	ReleaseNetwork(b.Bridge)
	m1, err := NewManager(ManagerOptions{StateDir: t.TempDir(), RootFS: testRootFS(t), Network: a})
	if err != nil {
		t.Fatalf("NewManager on its own reservation: %v", err)
	}
	if m2, err := NewManager(ManagerOptions{StateDir: t.TempDir(), RootFS: testRootFS(t), Network: a}); !errors.Is(err, ErrNetworkInUse) {
		if err == nil {
			_ = m2.Close()
		}
		t.Errorf("a second manager of this process on %s: %v, want %v", a.Bridge, err, ErrNetworkInUse)
	}
	if err := m1.Close(); err != nil {
		t.Error(err)
	}

	// another process holds c: NewManager refuses it before creating anything
	c := netw("fvr", x+2)
	holder := exec.Command("flock", "-n", "-o", lock("net-"+c.CIDR), "sh", "-c", "echo locked; exec sleep 600")
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Process.Kill(); _ = holder.Wait() }()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("the holder did not take the lock: %q, %v", line, err)
	}
	_, err = NewManager(ManagerOptions{StateDir: t.TempDir(), RootFS: testRootFS(t), Network: c})
	if !errors.Is(err, ErrNetworkInUse) || !strings.Contains(err.Error(), c.CIDR) {
		t.Errorf("NewManager on a network another lab holds: %v", err)
	}
	if out, _ := exec.Command("ip", "link", "show", c.Bridge).CombinedOutput(); !strings.Contains(string(out), "does not exist") {
		t.Errorf("the refused manager created bridge %s: %s", c.Bridge, out)
	}
	_ = holder.Process.Kill()
	_ = holder.Wait()
	// ... and the lock dies with its process
	if got, err := ReserveNetwork([]NetworkOptions{c}); err != nil || got != c {
		t.Errorf("after the holder died: %+v, %v", got, err)
	}
	ReleaseNetwork(c.Bridge)
}
