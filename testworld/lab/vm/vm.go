// Package vm runs Rocky-Linux-9-like build "virtual machines" without a
// hypervisor, for the offline OpenStack lab.
//
// Each machine's root is an overlay: the lower layer is the VM userland, a
// Debian tree built once with mmdebstrap (BuildRootFS, RootFSPackages), the
// upper directory is the machine's disk. guest/boot.sh boots it like a
// container runtime: in its own network namespace (a veth pair to a Linux
// bridge on the host holding the lab gateway address, Manager) and new
// mount, PID, UTS, IPC and cgroup namespaces (the cgroup namespace rooted at
// a cgroup2 directory of its own), with read-only /proc/sys (but net/) and
// sysfs, a minimal /dev, a pty as /dev/console copied into the console log,
// and systemd as PID 1. Debian's cloud-init configures the image's login
// user "rocky" from the metadata service (or a config drive), then sshd
// starts; ansible-init is a oneshot unit. The supervisor asks systemd to
// power off (SIGRTMIN+4) or reboot (SIGRTMIN+5); when PID 1 ends, the
// signal that killed it tells which it was (reboot(2) in a PID namespace:
// SIGHUP = reboot, the supervisor boots the disk again; SIGINT = power off,
// PowerShutdown).
//
// Metadata: one HTTP listener per Manager on <gateway>:<random port>; each
// VM's network namespace has an iptables nat OUTPUT DNAT from
// 169.254.169.254:80 to it, and the VM is identified by its source (fixed) IP.
// Floating IPs are a host route (<fip>/32 via <fixed IP> dev <bridge>) plus
// the address on the VM's eth0. A machine with a Firewall (its security
// groups) has its port filtered by iptables chains on the host
// (firewall.go); one without has no rules on the host.
//
// Host resources a Manager creates are recorded below /run/fatlab-vm; a later
// NewManager removes those of managers whose process died without Close.
//
// Everything here needs root. Limits (docs/lab.md, "The VMs"): the host's
// kernel, a Debian userland with Rocky identity files, no SELinux.
package vm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// NetworkOptions describe the lab's L2 network: a bridge on the host holding
// the gateway address.
type NetworkOptions struct {
	Bridge       string // e.g. "fatlab0" (max 15 chars)
	CIDR         string // e.g. "10.213.0.0/16": fixed IPs of VMs come from here
	Gateway      string // e.g. "10.213.0.1": on the bridge; VMs' default route
	FloatingCIDR string // e.g. "172.24.4.0/24": floating IPs; the host routes each to its VM
}

// ManagerOptions configure a Manager.
type ManagerOptions struct {
	StateDir string // all disks, per-boot files, logs live below here
	// RootFS is the VM userland every disk is an overlay upon (BuildRootFS).
	// Required: the host's own root is never a VM's lower layer.
	RootFS  string
	Network NetworkOptions
	// Metadata returns what the metadata service answers for the VM with this
	// fixed IP (nil: unknown VM -> 404).
	Metadata func(fixedIP string) *Metadata
	// NetworkMetadata: 169.254.169.254 is the network's (on the real-cloud
	// tier, Neutron's router carries it to its metadata proxy), so the
	// manager runs no metadata service and its VMs get no DNAT to one;
	// Metadata then only feeds config drives.
	NetworkMetadata bool
	Logf            func(format string, args ...any)
}

// Metadata is what the metadata service serves for one VM.
type Metadata struct {
	UUID, Name, Hostname string
	Meta                 map[string]string // server metadata -> "meta" in meta_data.json
	PublicKeys           map[string]string // keypair name -> OpenSSH public key -> "public_keys"
	UserData             []byte            // nil: user_data answers 404
	ProjectID            string            // optional; "project_id" in meta_data.json
	// ConfigDrive: the VM also finds this metadata on a config drive (read
	// at each boot, as Nova writes the drive when it starts the instance).
	ConfigDrive bool
}

// Manager owns the lab network, the metadata service, disks and machines.
type Manager struct {
	opts     ManagerOptions
	tag      string // random suffix for every global name
	stateDir string
	diskDir  string
	rootfs   string
	cgRoot   string // the host's cgroup2 mount
	bootSh   string
	setupSh  string

	gw        net.IP
	subnet    *net.IPNet
	prefixLen int
	floating  *net.IPNet

	bridgeCreated bool
	reg           *registry

	mdListener net.Listener
	mdServer   *http.Server
	mdAddr     string // host:port of the metadata listener

	mu       sync.Mutex
	closed   bool
	seq      int
	machines map[*Machine]struct{}

	unpackMu  sync.Mutex
	unpacking map[string]*sync.Mutex // image key -> held while it is unpacked (unpack.go)
}

// NewManager creates the bridge (idempotent), the gateway address, routing and
// the metadata service.
func NewManager(o ManagerOptions) (*Manager, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("vm: root required")
	}
	if o.StateDir == "" {
		return nil, errors.New("vm: StateDir required")
	}
	if o.RootFS == "" {
		return nil, errors.New("vm: RootFS required (see BuildRootFS)")
	}
	rootfs, err := filepath.Abs(o.RootFS)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(rootfs, "usr/lib/systemd/systemd")); err != nil {
		return nil, fmt.Errorf("vm: RootFS %s is not a VM userland: %w", rootfs, err)
	}
	n := o.Network
	if n.Bridge == "" || len(n.Bridge) > 15 {
		return nil, fmt.Errorf("vm: bad bridge name %q (1-15 chars)", n.Bridge)
	}
	_, subnet, err := net.ParseCIDR(n.CIDR)
	if err != nil {
		return nil, fmt.Errorf("vm: bad CIDR: %w", err)
	}
	gw := net.ParseIP(n.Gateway).To4()
	if gw == nil || !subnet.Contains(gw) {
		return nil, fmt.Errorf("vm: gateway %q not an IPv4 address in %s", n.Gateway, n.CIDR)
	}
	var floating *net.IPNet
	if n.FloatingCIDR != "" {
		if _, floating, err = net.ParseCIDR(n.FloatingCIDR); err != nil {
			return nil, fmt.Errorf("vm: bad FloatingCIDR: %w", err)
		}
	}
	cgRoot, err := cgroup2Root()
	if err != nil {
		return nil, err
	}
	// no other lab on this host may use this network (netreserve.go)
	if err := holdNetwork(n, true); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			ReleaseNetwork(n.Bridge)
		}
	}()
	ones, _ := subnet.Mask.Size()
	sd, err := filepath.Abs(o.StateDir)
	if err != nil {
		return nil, err
	}
	m := &Manager{
		opts:      o,
		tag:       randHex(3),
		stateDir:  sd,
		diskDir:   filepath.Join(sd, "disks"),
		rootfs:    rootfs,
		cgRoot:    cgRoot,
		gw:        gw,
		subnet:    subnet,
		prefixLen: ones,
		floating:  floating,
		machines:  map[*Machine]struct{}{},
	}
	for _, d := range []string{m.diskDir, filepath.Join(sd, "machines")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	sweepStale(m.logf)
	m.reg = newRegistry(m.tag)
	m.bootSh = filepath.Join(sd, "fatlab-boot.sh")
	m.setupSh = filepath.Join(sd, "fatlab-setup.sh")
	if err := os.WriteFile(m.bootSh, []byte(bootScript), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(m.setupSh, []byte(setupScript), 0o755); err != nil {
		return nil, err
	}
	if err := m.setupBridge(); err != nil {
		m.teardownBridge()
		m.reg.remove()
		return nil, err
	}
	if err := m.startMetadata(); err != nil {
		m.teardownBridge()
		m.reg.remove()
		return nil, err
	}
	m.logf("vm: manager %s: bridge %s gateway %s/%d metadata on %s", m.tag, n.Bridge, gw, ones, m.mdAddr)
	ok = true
	return m, nil
}

func (m *Manager) logf(format string, args ...any) {
	if m.opts.Logf != nil {
		m.opts.Logf(format, args...)
	}
}

func (m *Manager) setupBridge() error {
	br := m.opts.Network.Bridge
	if _, err := net.InterfaceByName(br); err != nil {
		m.regUpdate(func(r *registryRecord) { r.Bridge = br })
		if err := run("ip", "link", "add", "name", br, "type", "bridge"); err != nil {
			m.regUpdate(func(r *registryRecord) { r.Bridge = "" })
			return err
		}
		m.bridgeCreated = true
	}
	// replace: the address may be there already (a bridge someone else made)
	if err := run("ip", "addr", "replace", fmt.Sprintf("%s/%d", m.gw, m.prefixLen), "dev", br); err != nil {
		return err
	}
	return run("ip", "link", "set", br, "up")
}

func (m *Manager) teardownBridge() {
	if m.bridgeCreated {
		_ = run("ip", "link", "del", m.opts.Network.Bridge)
		m.bridgeCreated = false
	}
}

// Close destroys every machine this manager started and removes their
// network namespaces, veths and routes, the bridge (if this manager created
// it) and the metadata listener. Disks stay below StateDir.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	var ms []*Machine
	for vm := range m.machines {
		ms = append(ms, vm)
	}
	m.mu.Unlock()
	var errs []error
	var wg sync.WaitGroup
	var emu sync.Mutex
	for _, vm := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := vm.Destroy(); err != nil {
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
			}
		}()
	}
	wg.Wait()
	if m.mdServer != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 0)
		_ = m.mdServer.Shutdown(ctx)
		cancel()
		_ = m.mdServer.Close()
	}
	m.teardownBridge()
	if err := rmdirTree(m.cgroupBase()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	_ = syscall.Rmdir(filepath.Dir(m.cgroupBase())) // the shared parent, when no other manager uses it
	if len(errs) == 0 {
		m.reg.remove()
	}
	ReleaseNetwork(m.opts.Network.Bridge)
	return errors.Join(errs...)
}

func (m *Manager) regUpdate(f func(*registryRecord)) {
	if err := m.reg.update(f); err != nil {
		m.logf("vm: registry: %v", err)
	}
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func newUUID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
