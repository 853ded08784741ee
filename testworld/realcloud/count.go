package realcloud

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/snapshots"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/realcloud/guests"
)

// Resources are the ids of what lives in the cloud that a build may make,
// by kind, over every project (counted as the admin, by the real
// services): servers, volumes, volume snapshots, images, floating IPs,
// ports not owned by a router, security groups other than "default", the
// member user's keypairs and application credentials; and the guests the
// guest host runs (guests.go), with any VM processes running when it holds
// no guest.
type Resources map[string][]string

// Snapshot lists the cloud's resources.
func (t *Tier) Snapshot(ctx context.Context) (Resources, error) {
	admin, err := t.Provider(ctx, true)
	if err != nil {
		return nil, err
	}
	member, err := t.Provider(ctx, false)
	if err != nil {
		return nil, err
	}
	out := Resources{}
	add := func(kind, id string) { out[kind] = append(out[kind], id) }

	compute, err := openstack.NewComputeV2(admin, EndpointOpts)
	if err != nil {
		return nil, err
	}
	pages, err := servers.List(compute, servers.ListOpts{AllTenants: true}).AllPages(ctx)
	if err != nil {
		return nil, fmt.Errorf("realcloud: listing servers: %w", err)
	}
	srv, err := servers.ExtractServers(pages)
	if err != nil {
		return nil, err
	}
	for _, s := range srv {
		add("servers", s.ID+" "+s.Name+" "+s.Status)
	}
	mcompute, err := openstack.NewComputeV2(member, EndpointOpts)
	if err != nil {
		return nil, err
	}
	if pages, err = keypairs.List(mcompute, nil).AllPages(ctx); err != nil {
		return nil, fmt.Errorf("realcloud: listing keypairs: %w", err)
	}
	kps, err := keypairs.ExtractKeyPairs(pages)
	if err != nil {
		return nil, err
	}
	for _, k := range kps {
		add("keypairs", k.Name)
	}

	bs, err := openstack.NewBlockStorageV3(admin, EndpointOpts)
	if err != nil {
		return nil, err
	}
	if pages, err = volumes.List(bs, volumes.ListOpts{AllTenants: true}).AllPages(ctx); err != nil {
		return nil, fmt.Errorf("realcloud: listing volumes: %w", err)
	}
	vols, err := volumes.ExtractVolumes(pages)
	if err != nil {
		return nil, err
	}
	for _, v := range vols {
		add("volumes", v.ID+" "+v.Name+" "+v.Status)
	}
	if pages, err = snapshots.List(bs, snapshots.ListOpts{AllTenants: true}).AllPages(ctx); err != nil {
		return nil, fmt.Errorf("realcloud: listing volume snapshots: %w", err)
	}
	snaps, err := snapshots.ExtractSnapshots(pages)
	if err != nil {
		return nil, err
	}
	for _, s := range snaps {
		add("volume_snapshots", s.ID+" "+s.Status)
	}

	ic, err := openstack.NewImageV2(admin, EndpointOpts)
	if err != nil {
		return nil, err
	}
	// Glance lists an admin every image but the community ones unless
	// asked for them.
	for _, vis := range []images.ImageVisibility{"", images.ImageVisibilityCommunity} {
		if pages, err = images.List(ic, images.ListOpts{Visibility: vis}).AllPages(ctx); err != nil {
			return nil, fmt.Errorf("realcloud: listing images: %w", err)
		}
		imgs, err := images.ExtractImages(pages)
		if err != nil {
			return nil, err
		}
		for _, im := range imgs {
			add("images", im.ID+" "+im.Name+" "+string(im.Status))
		}
	}

	nc, err := openstack.NewNetworkV2(admin, EndpointOpts)
	if err != nil {
		return nil, err
	}
	if pages, err = floatingips.List(nc, floatingips.ListOpts{}).AllPages(ctx); err != nil {
		return nil, fmt.Errorf("realcloud: listing floating IPs: %w", err)
	}
	fips, err := floatingips.ExtractFloatingIPs(pages)
	if err != nil {
		return nil, err
	}
	for _, f := range fips {
		add("floating_ips", f.ID+" "+f.FloatingIP)
	}
	if pages, err = ports.List(nc, ports.ListOpts{}).AllPages(ctx); err != nil {
		return nil, fmt.Errorf("realcloud: listing ports: %w", err)
	}
	ps, err := ports.ExtractPorts(pages)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if strings.HasPrefix(p.DeviceOwner, "network:") {
			continue // the router's and the floating IPs' own ports
		}
		add("ports", p.ID+" "+p.DeviceOwner+" "+p.DeviceID)
	}
	if pages, err = groups.List(nc, groups.ListOpts{}).AllPages(ctx); err != nil {
		return nil, fmt.Errorf("realcloud: listing security groups: %w", err)
	}
	sgs, err := groups.ExtractGroups(pages)
	if err != nil {
		return nil, err
	}
	for _, g := range sgs {
		if g.Name != "default" {
			add("security_groups", g.ID+" "+g.Name)
		}
	}

	id, err := openstack.NewIdentityV3(admin, EndpointOpts)
	if err != nil {
		return nil, err
	}
	if pages, err = users.List(id, users.ListOpts{Name: MemberUser, DomainID: "default"}).AllPages(ctx); err != nil {
		return nil, err
	}
	us, err := users.ExtractUsers(pages)
	if err != nil || len(us) != 1 {
		return nil, fmt.Errorf("realcloud: the member user: %d found, %v", len(us), err)
	}
	if pages, err = applicationcredentials.List(id, us[0].ID, nil).AllPages(ctx); err != nil {
		return nil, fmt.Errorf("realcloud: listing application credentials: %w", err)
	}
	acs, err := applicationcredentials.ExtractApplicationCredentials(pages)
	if err != nil {
		return nil, err
	}
	for _, a := range acs {
		add("application_credentials", a.ID+" "+a.Name)
	}
	if err := t.countGuests(ctx, add); err != nil {
		return nil, err
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out, nil
}

// countGuests adds the guest host's guests and, when it holds none, the
// processes still running in its VMs (a VM its record lost).
func (t *Tier) countGuests(ctx context.Context, add func(kind, id string)) error {
	l, err := guests.List(ctx, t.GuestSocket())
	if err != nil {
		return fmt.Errorf("realcloud: listing guests: %w", err)
	}
	for _, g := range l.Servers {
		add("guests", g.UUID+" "+g.Name+" "+g.Power)
	}
	if len(l.Servers) == 0 && l.Processes > 0 {
		add("guest_processes", fmt.Sprintf("unowned %d", l.Processes))
	}
	return nil
}

// Added is what r has that before has not, by kind.
func (r Resources) Added(before Resources) Resources {
	out := Resources{}
	for kind, ids := range r {
		had := map[string]bool{}
		for _, id := range before[kind] {
			had[strings.Fields(id)[0]] = true
		}
		for _, id := range ids {
			if !had[strings.Fields(id)[0]] {
				out[kind] = append(out[kind], id)
			}
		}
	}
	return out
}

// String lists the resources kind by kind.
func (r Resources) String() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(r)) {
		fmt.Fprintf(&b, "%s (%d):\n", k, len(r[k]))
		for _, id := range r[k] {
			fmt.Fprintf(&b, "  %s\n", id)
		}
	}
	return b.String()
}
