package realcloud

import (
	"context"
	"os"
	"path/filepath"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/vm"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/realcloud/guests"
)

// GuestImageName is the image whose servers boot as real guests: the
// lab's Rocky-9-GenericCloud-like disk as a raw ext4 file. Nova's driver
// boots a guest for every image that is such a filesystem, so snapshots
// of a guest boot as guests too.
const GuestImageName = "realcloud-guest-rocky-9.6"

// GuestNetwork is the guests' provider network: its switch, a bridge
// up.sh makes (lib.sh's GUEST_BRIDGE), and the tenant subnet
// (10.42.0.0/24). Its Gateway is the host's own address on the switch,
// out of the subnet's allocation pool, as a site's client on a provider
// network: the subnet's gateway, 10.42.0.1, is the router's port. The
// guests are not on the switch itself: their taps go into the network's
// bridge the Linux bridge agent makes, whose uplink is GuestInterface.
var GuestNetwork = vm.NetworkOptions{Bridge: "rcguest0", CIDR: "10.42.0.0/24", Gateway: "10.42.0.254"}

// GuestInterface is the compute host's interface into GuestNetwork, a veth
// whose peer is a port of its switch (lib.sh's GUEST_NIC): Neutron's
// physical network "guests" (linuxbridge_agent.ini).
const GuestInterface = "rcguest0nic"

// The guests' subnet's allocation pool: every address but the router's
// (the gateway) and the host's.
const guestPoolStart, guestPoolEnd = "10.42.0.2", "10.42.0.250"

// ExternalBridge carries the floating IPs' network (physical network
// "ext", linuxbridge_agent.ini): up.sh makes it with the external
// subnet's gateway address, so the host reaches floating IPs through the
// router's gateway port on it, as a site's hosts reach a provider network.
const ExternalBridge = "rcext0"

// ExternalCIDR is the external network's subnet, the floating IPs';
// ExternalGateway its gateway (Neutron's default, the first address), the
// host's address on ExternalBridge (lib.sh's EXT_ADDRESS).
const ExternalCIDR, ExternalGateway = "198.51.100.0/24", "198.51.100.1"

// GuestPhysicalNetwork is Neutron's name of GuestNetwork: the tenant
// network is a flat network on it (linuxbridge_agent.ini).
const GuestPhysicalNetwork = "guests"

// GuestSocket is the guest host's API socket (python/fatcloud/guest_driver.py).
func (t *Tier) GuestSocket() string { return filepath.Join(t.Dir, "run", "guests.sock") }

// GuestImage is the guest base image's file.
func (t *Tier) GuestImage() string { return filepath.Join(t.Dir, "images", "guest-base.raw") }

// RunGuests runs the guest host until ctx ends.
func (t *Tier) RunGuests(ctx context.Context, logf func(string, ...any)) error {
	h, err := guests.Start(ctx, guests.Options{
		StateDir: filepath.Join(t.Dir, "guests"), CacheDir: lab.DefaultCacheDir(), Socket: t.GuestSocket(),
		BaseImage: t.GuestImage(), Network: GuestNetwork,
		Logf: logf,
	})
	if err != nil {
		return err
	}
	<-ctx.Done()
	return h.Close()
}

// ensureGuestImage uploads the guest base image the guest host wrote.
func ensureGuestImage(ctx context.Context, c *gophercloud.ServiceClient, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return ensureImage(ctx, c, GuestImageName, f)
}
