package realcloud

import (
	"context"
	"os"
	"path/filepath"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/vm"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/realcloud/guests"
)

// GuestImageName is the image whose servers boot as real guests: the
// lab's Rocky-9-GenericCloud-like disk as a raw ext4 file. Nova's driver
// boots a guest for every image that is such a filesystem, so snapshots
// of a guest boot as guests too.
const GuestImageName = "realcloud-guest-rocky-9.6"

// GuestNetwork is the guests' bridge: the tenant subnet (10.42.0.0/24) with
// its router's address, and the public subnet's floating IPs.
var GuestNetwork = vm.NetworkOptions{Bridge: "rcguest0", CIDR: "10.42.0.0/24", Gateway: "10.42.0.1", FloatingCIDR: "203.0.113.0/24"}

// GuestPhysicalNetwork is Neutron's name of GuestNetwork's bridge: the
// tenant network is a flat network on it (linuxbridge_agent.ini).
const GuestPhysicalNetwork = "guests"

// GuestSocket is the guest host's API socket (python/fatcloud/guest_driver.py).
func (t *Tier) GuestSocket() string { return filepath.Join(t.Dir, "run", "guests.sock") }

// GuestImage is the guest base image's file.
func (t *Tier) GuestImage() string { return filepath.Join(t.Dir, "images", "guest-base.raw") }

// RunGuests runs the guest host until ctx ends.
func (t *Tier) RunGuests(ctx context.Context, logf func(string, ...any)) error {
	secret, err := t.Secret("metadata")
	if err != nil {
		return err
	}
	h, err := guests.Start(ctx, guests.Options{
		StateDir: filepath.Join(t.Dir, "guests"), CacheDir: lab.DefaultCacheDir(), Socket: t.GuestSocket(),
		BaseImage: t.GuestImage(), Network: GuestNetwork,
		MetadataURL: MetadataURL(t.Ports), Secret: secret,
		Floating: &floatingSource{t: t}, Logf: logf,
	})
	if err != nil {
		return err
	}
	<-ctx.Done()
	return h.Close()
}

// floatingSource reads the associated floating IPs as the admin (one
// token, renewed when it expires).
type floatingSource struct {
	t *Tier
	c *gophercloud.ServiceClient
}

func (f *floatingSource) FloatingIPs(ctx context.Context) (map[string]string, error) {
	if f.c == nil {
		p, err := f.t.Provider(ctx, true)
		if err != nil {
			return nil, err
		}
		c, err := openstack.NewNetworkV2(p, EndpointOpts) // not kept on an error: it may be half made
		if err != nil {
			return nil, err
		}
		f.c = c
	}
	pages, err := floatingips.List(f.c, floatingips.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := floatingips.ExtractFloatingIPs(pages)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, fip := range all {
		if fip.PortID != "" && fip.FixedIP != "" {
			out[fip.FloatingIP] = fip.FixedIP
		}
	}
	return out, nil
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
