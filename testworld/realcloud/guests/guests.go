// Package guests is the real-cloud tier's hypervisor: the lab's namespace
// VMs (testworld/lab/vm: systemd, sshd, cloud-init on a Rocky-like
// userland) run here, driven by Nova's compute driver
// (python/fatcloud/guest_driver.py) over a small JSON API on a Unix socket.
//
// A guest's tap goes into the bridge its Nova VIF names (the Linux bridge
// agent's brq<network id>), as libvirt plugs one; the guest has the MAC
// of its Neutron port and the address Neutron's DHCP agent leases it.
// Floating IPs and 169.254.169.254 are the router's (Neutron's metadata
// proxy in it, then its metadata agent, then Nova's metadata API), not
// the guest host's. The manager's own bridge (Options.Network) is the
// provider network's switch, where the host has an address.
package guests

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/vm"
)

// Options configure a Host.
type Options struct {
	StateDir string // disks and machines (below it: vm/)
	CacheDir string // the lab's cache: the VM userland and repositories
	Socket   string // the API's Unix socket
	// BaseImage is where the guest base image (a raw ext4 file, as the
	// lab's Glance holds it) is written for the seed to upload.
	BaseImage string
	Network   vm.NetworkOptions
	Logf      func(format string, args ...any)
}

// Host runs the guests.
type Host struct {
	opts Options
	vms  *vm.Manager
	srv  *http.Server

	mu      sync.Mutex
	servers map[string]*guest // by instance uuid
}

type guest struct {
	spec    Spec
	disk    string
	machine *vm.Machine
}

// Start builds (or finds in the cache) the VM userland and the base image,
// starts the VM manager and serves the API until Close.
func Start(ctx context.Context, o Options) (*Host, error) {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	rootfs, err := vm.BuildRootFS(filepath.Join(o.CacheDir, "rootfs"), o.Logf)
	if err != nil {
		return nil, err
	}
	h := &Host{opts: o, servers: map[string]*guest{}}
	mgr, err := vm.NewManager(vm.ManagerOptions{
		StateDir: filepath.Join(o.StateDir, "vm"), RootFS: rootfs, Network: o.Network,
		NetworkMetadata: true, Logf: o.Logf,
	})
	if err != nil {
		return nil, err
	}
	h.vms = mgr
	if err := h.writeBaseImage(); err != nil {
		mgr.Close()
		return nil, err
	}
	if err := h.serve(); err != nil {
		mgr.Close()
		return nil, err
	}
	return h, nil
}

// writeBaseImage writes the lab's Rocky-9-GenericCloud-like image as a raw
// file, once: the repositories' base RPMs in its rpm db.
func (h *Host) writeBaseImage() error {
	if _, err := os.Stat(h.opts.BaseImage); err == nil {
		return nil
	}
	rs, err := repos.Build(repos.Options{CacheDir: filepath.Join(h.opts.CacheDir, "repos"), Logf: h.opts.Logf})
	if err != nil {
		return err
	}
	disk, err := vm.BuildBaseImage(h.vms, vm.BaseImageOptions{
		RockyVersion: "9.6", RPMs: rs.BaseImageRPMs["9"],
		GPGKeys: map[string][]byte{"RPM-GPG-KEY-Rocky-9": rs.GPGKeyFiles["RPM-GPG-KEY-Rocky-9"]},
		DHCP:    true, // Neutron's DHCP agent serves the guests' network
	})
	if err != nil {
		return err
	}
	defer func() { _ = h.vms.DeleteDisk(disk) }()
	tmp := h.opts.BaseImage + ".tmp"
	if _, err := h.vms.ExportDisk(disk, "raw", tmp); err != nil {
		return err
	}
	return os.Rename(tmp, h.opts.BaseImage)
}

func (h *Host) serve() error {
	_ = os.Remove(h.opts.Socket)
	l, err := net.Listen("unix", h.opts.Socket)
	if err != nil {
		return err
	}
	if err := os.Chmod(h.opts.Socket, 0o600); err != nil {
		l.Close()
		return err
	}
	h.srv = &http.Server{Handler: h.routes(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := h.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			h.opts.Logf("guests: API: %v", err)
		}
	}()
	return nil
}

// Close destroys every guest and the network it made.
func (h *Host) Close() error {
	if h.srv != nil {
		_ = h.srv.Close()
	}
	return h.vms.Close()
}

func (h *Host) get(uuid string) (*guest, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	g, ok := h.servers[uuid]
	if !ok {
		return nil, fmt.Errorf("%w: %s", errNoGuest, uuid)
	}
	return g, nil
}

var errNoGuest = errors.New("no such guest")

// errBooting: the guest's boot has not made its machine yet.
var errBooting = errors.New("guest still booting")

// machineOf is the guest uuid names with its machine, both read under
// h.mu (boot sets the machine while the API serves); every handler that
// acts on the machine goes through it, so none sees it unset.
func (h *Host) machineOf(uuid string) (*guest, *vm.Machine, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	g, ok := h.servers[uuid]
	switch {
	case !ok:
		return nil, nil, fmt.Errorf("%w: %s", errNoGuest, uuid)
	case g.machine == nil:
		return nil, nil, fmt.Errorf("%w: %s", errBooting, uuid)
	}
	return g, g.machine, nil
}
