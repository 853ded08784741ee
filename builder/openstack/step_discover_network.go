package openstack

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// StepDiscoverNetwork picks a network by network_discovery_cidrs when
// neither networks nor ports are given.
type StepDiscoverNetwork struct{}

func (s *StepDiscoverNetwork) Run(ctx context.Context, state multistep.StateBag) multistep.StepAction {
	c := state.Get("config").(*Config)
	state.Put("networks", c.Networks)
	if len(c.Networks) > 0 || len(c.Ports) > 0 || len(c.NetworkDiscoveryCIDRs) == 0 {
		return multistep.ActionContinue
	}
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)
	if err := cl.needNetwork("network_discovery_cidrs"); err != nil {
		return halt(state, err)
	}
	ui.Say(fmt.Sprintf("Discovering a network with a subnet in %v...", c.NetworkDiscoveryCIDRs))
	id, err := discoverNetwork(ctx, cl, c.NetworkDiscoveryCIDRs)
	if err != nil {
		return halt(state, err)
	}
	ui.Say(fmt.Sprintf("Using network %s", id))
	state.Put("networks", []string{id})
	return multistep.ActionContinue
}

func (s *StepDiscoverNetwork) Cleanup(multistep.StateBag) {}

// discoverNetwork returns the network of the first subnet lying inside one
// of cidrs, trying the CIDRs in the order given.
func discoverNetwork(ctx context.Context, cl *clients, cidrs []string) (string, error) {
	pages, err := subnets.List(cl.network, subnets.ListOpts{}).AllPages(ctx)
	if err != nil {
		return "", fmt.Errorf("network_discovery_cidrs: listing subnets: %w", err)
	}
	all, err := subnets.ExtractSubnets(pages)
	if err != nil {
		return "", fmt.Errorf("network_discovery_cidrs: listing subnets: %w", err)
	}
	for _, want := range cidrs {
		outer, err := netip.ParsePrefix(want)
		if err != nil {
			return "", fmt.Errorf("network_discovery_cidrs: %q: %w", want, err)
		}
		for _, sn := range all {
			p, err := netip.ParsePrefix(sn.CIDR)
			if err != nil {
				continue
			}
			if p.Bits() >= outer.Bits() && outer.Contains(p.Addr()) {
				return sn.NetworkID, nil
			}
		}
	}
	return "", fmt.Errorf("network_discovery_cidrs: no subnet lies inside %v", cidrs)
}
