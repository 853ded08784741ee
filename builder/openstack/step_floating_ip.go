package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"sort"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// StepFloatingIP attaches a floating IP to the server, in the official
// builder's order of preference: an existing one (floating_ip, by ID or
// address), a free one of the project (reuse_ips) or a new one from
// floating_ip_network. Cleanup releases what it
// allocated and detaches what it borrowed.
type StepFloatingIP struct {
	allocated string // released on cleanup
	borrowed  string // detached on cleanup
}

func (s *StepFloatingIP) Run(ctx context.Context, state multistep.StateBag) multistep.StepAction {
	c := state.Get("config").(*Config)
	if !c.UseFloatingIP {
		return multistep.ActionContinue
	}
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)
	if err := cl.needNetwork("floating_ip_network"); err != nil {
		return halt(state, err)
	}
	serverID := state.Get("server_id").(string)
	port, err := serverPort(ctx, cl, c, serverID)
	if err != nil {
		return halt(state, err)
	}

	var fip *floatingips.FloatingIP
	switch {
	case c.FloatingIP != "":
		fip, err = findFloatingIP(ctx, cl, c.FloatingIP)
		if err == nil && fip.PortID != "" && fip.PortID != port {
			err = fmt.Errorf("floating_ip: %s is already attached to port %s", fip.FloatingIP, fip.PortID)
		}
		if err != nil {
			return halt(state, err)
		}
		s.borrowed = fip.ID
	case c.ReuseIPs:
		var netID string
		if c.FloatingIPNetwork != "" {
			if netID, err = findNetwork(ctx, cl, "floating_ip_network", c.FloatingIPNetwork); err != nil {
				return halt(state, err)
			}
		}
		if fip, err = claimFreeFloatingIP(ctx, cl, netID, port); err != nil {
			return halt(state, err)
		}
		ui.Say(fmt.Sprintf("Reusing the free floating IP %s (reuse_ips)", fip.FloatingIP))
		s.borrowed = fip.ID
	default:
		netID, err := findNetwork(ctx, cl, "floating_ip_network", c.FloatingIPNetwork)
		if err != nil {
			return halt(state, err)
		}
		ui.Say("Allocating a floating IP...")
		opts := floatingips.CreateOpts{FloatingNetworkID: netID, PortID: port, Description: fipDescription(c)}
		fip, err = createOrAdopt(ctx, ui, "floating_ip_network: allocating a floating IP on "+netID, func(ctx context.Context) (*floatingips.FloatingIP, error) {
			return floatingips.Create(ctx, cl.network, opts).Extract()
		}, func(ctx context.Context) (*floatingips.FloatingIP, bool, error) {
			return findOwnFloatingIP(ctx, cl, c)
		})
		if err != nil {
			return halt(state, err)
		}
		s.allocated = fip.ID
		trackerOf(state).Add("floating IP", fip.ID, fip.FloatingIP)
	}
	if fip.PortID != port {
		ui.Say(fmt.Sprintf("Attaching floating IP %s to port %s...", fip.FloatingIP, port))
		fip, err = floatingips.Update(ctx, cl.network, fip.ID, floatingips.UpdateOpts{PortID: &port}).Extract()
		if err != nil {
			return halt(state, fmt.Errorf("attaching floating IP to port %s: %w", port, err))
		}
	}
	ui.Say(fmt.Sprintf("Floating IP %s is attached", fip.FloatingIP))
	state.Put("floating_ip", fip.FloatingIP)
	setGenerated(state, "FloatingIP", fip.FloatingIP)
	return multistep.ActionContinue
}

// serverPort picks the server port the floating IP goes to: the one on
// instance_floating_ip_net, else the one on the first network or port the
// template gave, else the first with an IPv4 address.
func serverPort(ctx context.Context, cl *clients, c *Config, serverID string) (string, error) {
	pages, err := ports.List(cl.network, ports.ListOpts{DeviceID: serverID}).AllPages(ctx)
	if err != nil {
		return "", fmt.Errorf("listing ports of server %s: %w", serverID, err)
	}
	all, err := ports.ExtractPorts(pages)
	if err != nil {
		return "", fmt.Errorf("listing ports of server %s: %w", serverID, err)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	if c.InstanceFloatingIPNet != "" {
		netID, err := findNetwork(ctx, cl, "instance_floating_ip_net", c.InstanceFloatingIPNet)
		if err != nil {
			return "", err
		}
		for _, p := range all {
			if p.NetworkID == netID {
				return p.ID, nil
			}
		}
		return "", fmt.Errorf("instance_floating_ip_net: server %s has no port on network %s", serverID, netID)
	}
	for _, p := range all {
		if (len(c.Ports) > 0 && p.ID == c.Ports[0]) || (len(c.Ports) == 0 && len(c.Networks) > 0 && p.NetworkID == c.Networks[0]) {
			return p.ID, nil
		}
	}
	for _, p := range all {
		for _, ip := range p.FixedIPs {
			if a, err := netip.ParseAddr(ip.IPAddress); err == nil && a.Is4() {
				return p.ID, nil
			}
		}
	}
	if len(all) > 0 {
		return all[0].ID, nil
	}
	return "", fmt.Errorf("server %s has no port to attach a floating IP to", serverID)
}

// findFloatingIP takes an ID or an address.
func findFloatingIP(ctx context.Context, cl *clients, ref string) (*floatingips.FloatingIP, error) {
	if _, err := netip.ParseAddr(ref); err == nil {
		pages, err := floatingips.List(cl.network, floatingips.ListOpts{FloatingIP: ref}).AllPages(ctx)
		if err != nil {
			return nil, fmt.Errorf("floating_ip: looking up %s: %w", ref, err)
		}
		all, err := floatingips.ExtractFloatingIPs(pages)
		if err != nil {
			return nil, fmt.Errorf("floating_ip: looking up %s: %w", ref, err)
		}
		for _, f := range all {
			if f.FloatingIP == ref {
				return &f, nil
			}
		}
		return nil, fmt.Errorf("floating_ip: the project has no floating IP %s", ref)
	}
	fip, err := floatingips.Get(ctx, cl.network, ref).Extract()
	if err != nil {
		return nil, fmt.Errorf("floating_ip: looking up %s: %w", ref, err)
	}
	return fip, nil
}

// ownFloatingIPs lists the floating IPs this build allocated, by their
// description (checked here too: a cloud may ignore the filter).
func ownFloatingIPs(ctx context.Context, cl *clients, c *Config) ([]floatingips.FloatingIP, error) {
	pages, err := floatingips.List(cl.network, floatingips.ListOpts{Description: fipDescription(c)}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := floatingips.ExtractFloatingIPs(pages)
	if err != nil {
		return nil, err
	}
	var out []floatingips.FloatingIP
	for _, f := range all {
		if f.Description == fipDescription(c) {
			out = append(out, f)
		}
	}
	return out, nil
}

// findOwnFloatingIP finds the floating IP a lost create made.
func findOwnFloatingIP(ctx context.Context, cl *clients, c *Config) (*floatingips.FloatingIP, bool, error) {
	all, err := ownFloatingIPs(ctx, cl, c)
	if err != nil || len(all) == 0 {
		return nil, false, err
	}
	return &all[0], true, nil
}

// claimFreeFloatingIP attaches to port a floating IP of the project that
// is DOWN and on no port, on netID when that is set, as the official
// builder's reuse_ips does (it fails when there is none, never allocating
// one). Neutron moves an attached IP to whichever port asks last, so two
// builds could take the same one (packer #4551): the attach is
// conditional on the IP's revision, and one taken meanwhile is skipped.
func claimFreeFloatingIP(ctx context.Context, cl *clients, netID, port string) (*floatingips.FloatingIP, error) {
	free, err := freeFloatingIPs(ctx, cl, netID)
	if err != nil {
		return nil, err
	}
	return claimFloatingIP(ctx, cl, free, port, netID)
}

// claimFloatingIP attaches the first of free that nobody changed since it
// was listed.
func claimFloatingIP(ctx context.Context, cl *clients, free []floatingips.FloatingIP, port, netID string) (*floatingips.FloatingIP, error) {
	for _, f := range free {
		rev := f.RevisionNumber
		got, err := floatingips.Update(ctx, cl.network, f.ID, floatingips.UpdateOpts{PortID: &port, RevisionNumber: &rev}).Extract()
		if gophercloud.ResponseCodeIs(err, http.StatusPreconditionFailed) {
			continue // another build took it
		}
		if err != nil {
			return nil, fmt.Errorf("reuse_ips: attaching floating IP %s to port %s: %w", f.FloatingIP, port, err)
		}
		return got, nil
	}
	if netID != "" {
		return nil, fmt.Errorf("reuse_ips: the project has no free (DOWN, unattached) floating IP on network %s", netID)
	}
	return nil, errors.New("reuse_ips: the project has no free (DOWN, unattached) floating IP")
}

// freeFloatingIPs lists the project's DOWN floating IPs on no port.
func freeFloatingIPs(ctx context.Context, cl *clients, netID string) ([]floatingips.FloatingIP, error) {
	pages, err := floatingips.List(cl.network, floatingips.ListOpts{FloatingNetworkID: netID, Status: "DOWN"}).AllPages(ctx)
	if err != nil {
		return nil, fmt.Errorf("reuse_ips: listing floating IPs: %w", err)
	}
	all, err := floatingips.ExtractFloatingIPs(pages)
	if err != nil {
		return nil, fmt.Errorf("reuse_ips: listing floating IPs: %w", err)
	}
	var free []floatingips.FloatingIP
	for _, f := range all {
		if f.PortID == "" {
			free = append(free, f)
		}
	}
	return free, nil
}

func (s *StepFloatingIP) Cleanup(state multistep.StateBag) {
	if s.allocated == "" && s.borrowed == "" {
		return
	}
	c := state.Get("config").(*Config)
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)
	ctx, cancel := cleanupContext(state, c)
	defer cancel()
	if s.allocated != "" {
		ui.Say(fmt.Sprintf("Releasing floating IP %s...", s.allocated))
		err := floatingips.Delete(ctx, cl.network, s.allocated).ExtractErr()
		if err != nil && !isNotFound(err) {
			ui.Error(fmt.Sprintf("Error releasing floating IP %s: %s; release it by hand", s.allocated, err))
		} else {
			trackerOf(state).Done("floating IP", s.allocated)
			s.allocated = ""
		}
	}
	if s.borrowed != "" {
		ui.Say(fmt.Sprintf("Detaching floating IP %s...", s.borrowed))
		none := ""
		_, err := floatingips.Update(ctx, cl.network, s.borrowed, floatingips.UpdateOpts{PortID: &none}).Extract()
		if err != nil && !isNotFound(err) {
			ui.Error(fmt.Sprintf("Error detaching floating IP %s: %s", s.borrowed, err))
		} else {
			s.borrowed = ""
		}
	}
}
