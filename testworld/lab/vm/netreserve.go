package vm

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Labs that run at once on one host (several test packages, make lab-up)
// must not share a bridge or a subnet. A lab network is held by exclusive
// flocks on /run/fatlab-net/<name>.lock, one for its bridge, one for its
// fixed and one for its floating subnet, for as long as its Manager lives: host-wide, across processes, and released by the kernel
// when a process dies without Close, so a crashed lab never blocks a
// network for good.

// netLockDir holds the network locks (a variable for tests).
var netLockDir = "/run/fatlab-net"

// ErrNetworkInUse is returned when another lab on this host holds a network.
var ErrNetworkInUse = errors.New("in use by another lab on this host")

// hold is this process's hold on one network: its locked files, and
// whether a Manager uses it (or it is only reserved).
type hold struct {
	files   []*os.File
	claimed bool
}

var held = struct {
	sync.Mutex
	nets map[string]*hold // by bridge
}{nets: map[string]*hold{}}

// ReserveNetwork returns the first of candidates that no lab on this host
// (this process's included) holds and whose bridge does not exist, and
// holds it for this process until the Manager using it closes (or
// ReleaseNetwork).
func ReserveNetwork(candidates []NetworkOptions) (NetworkOptions, error) {
	for _, n := range candidates {
		if _, err := net.InterfaceByName(n.Bridge); err == nil {
			continue // a bridge of a lab that predates the locks, or of anything else
		}
		if err := holdNetwork(n, false); err == nil {
			return n, nil
		} else if !errors.Is(err, ErrNetworkInUse) {
			return NetworkOptions{}, err
		}
	}
	return NetworkOptions{}, fmt.Errorf("vm: all %d candidate lab networks are %w", len(candidates), ErrNetworkInUse)
}

// holdNetwork takes the locks of network n. A network this process holds
// is in use too, unless claim (NewManager) takes up a reservation no
// Manager has claimed yet: two managers of one process on one bridge
// would share its address, and the first to close would delete the
// bridge under the other's machines (a CI failure).
func holdNetwork(n NetworkOptions, claim bool) error {
	held.Lock()
	defer held.Unlock()
	if h := held.nets[n.Bridge]; h != nil {
		if !claim || h.claimed {
			return fmt.Errorf("vm: lab network %s is %w (a lab of this process)", n.Bridge, ErrNetworkInUse)
		}
		h.claimed = true
		return nil
	}
	for _, c := range []*string{&n.CIDR, &n.FloatingCIDR} {
		if _, p, err := net.ParseCIDR(*c); err == nil {
			*c = p.String() // one lock name however the subnet is written
		}
	}
	if err := os.MkdirAll(netLockDir, 0o755); err != nil {
		return err
	}
	var files []*os.File
	drop := func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, name := range []string{"bridge-" + n.Bridge, "net-" + n.CIDR, "net-" + n.FloatingCIDR} {
		if name == "net-" {
			continue // no floating network
		}
		f, err := os.OpenFile(filepath.Join(netLockDir, strings.ReplaceAll(name, "/", "_")+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			drop()
			return err
		}
		files = append(files, f)
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			drop()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return fmt.Errorf("vm: lab network %s (%s) is %w", n.Bridge, strings.TrimPrefix(strings.TrimPrefix(name, "bridge-"), "net-"), ErrNetworkInUse)
			}
			return fmt.Errorf("vm: locking lab network %s: %w", name, err)
		}
	}
	held.nets[n.Bridge] = &hold{files: files, claimed: claim}
	return nil
}

// ReleaseNetwork gives up this process's hold on bridge's network
// (Manager.Close does it).
func ReleaseNetwork(bridge string) {
	held.Lock()
	defer held.Unlock()
	h := held.nets[bridge]
	if h == nil {
		return
	}
	for _, f := range h.files {
		f.Close() // closing the last descriptor drops the flock
	}
	delete(held.nets, bridge)
}
