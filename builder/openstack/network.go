package openstack

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
)

// findNetwork resolves a network ID or name.
func findNetwork(ctx context.Context, cl *clients, field, ref string) (string, error) {
	if n, err := networks.Get(ctx, cl.network, ref).Extract(); err == nil {
		return n.ID, nil
	} else if !isNotFound(err) {
		return "", fmt.Errorf("%s: looking up network %q: %w", field, ref, err)
	}
	pages, err := networks.List(cl.network, networks.ListOpts{Name: ref}).AllPages(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: listing networks: %w", field, err)
	}
	all, err := networks.ExtractNetworks(pages)
	if err != nil {
		return "", fmt.Errorf("%s: listing networks: %w", field, err)
	}
	switch len(all) {
	case 0:
		return "", fmt.Errorf("%s: no network has ID or name %q", field, ref)
	case 1:
		return all[0].ID, nil
	}
	return "", fmt.Errorf("%s: %d networks are named %q; give the ID", field, len(all), ref)
}
