package openstack

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// StepLoadFlavor resolves `flavor` (an ID or a name) to a flavor.
type StepLoadFlavor struct{}

func (s *StepLoadFlavor) Run(ctx context.Context, state multistep.StateBag) multistep.StepAction {
	c := state.Get("config").(*Config)
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)
	ui.Say(fmt.Sprintf("Loading flavor %s...", c.Flavor))
	f, err := findFlavor(ctx, cl, c.Flavor)
	if err != nil {
		return halt(state, err)
	}
	ui.Say(fmt.Sprintf("Flavor %s (%s): %d vCPU, %d MiB RAM, %d GiB disk", f.Name, f.ID, f.VCPUs, f.RAM, f.Disk))
	if w := zeroDiskWarning(c, f); w != "" {
		ui.Say(w)
	}
	state.Put("flavor_id", f.ID)
	state.Put("flavor_disk", f.Disk)
	return multistep.ActionContinue
}

func (s *StepLoadFlavor) Cleanup(multistep.StateBag) {}

func findFlavor(ctx context.Context, cl *clients, ref string) (*flavors.Flavor, error) {
	f, err := flavors.Get(ctx, cl.compute, ref).Extract()
	if err == nil {
		return f, nil
	}
	if !isNotFound(err) {
		return nil, fmt.Errorf("flavor: looking up %q: %w", ref, err)
	}
	pages, err := flavors.ListDetail(cl.compute, flavors.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, fmt.Errorf("flavor: listing flavors: %w", err)
	}
	all, err := flavors.ExtractFlavors(pages)
	if err != nil {
		return nil, fmt.Errorf("flavor: listing flavors: %w", err)
	}
	var found []flavors.Flavor
	for _, f := range all {
		if f.Name == ref {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("flavor: no flavor has ID or name %q", ref)
	case 1:
		return &found[0], nil
	}
	return nil, fmt.Errorf("flavor: %d flavors are named %q; give the ID", len(found), ref)
}
