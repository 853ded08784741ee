package openstack

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// StepStopServer shuts the server down so the image is taken from a clean
// disk, and waits for SHUTOFF.
type StepStopServer struct{}

func (s *StepStopServer) Run(ctx context.Context, state multistep.StateBag) multistep.StepAction {
	c := state.Get("config").(*Config)
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)
	id := state.Get("server_id").(string)

	srv, err := servers.Get(ctx, cl.compute, id).Extract()
	if err != nil {
		return halt(state, fmt.Errorf("getting server %s: %w", id, err))
	}
	// A provisioner may already have powered it off.
	if srv.Status != "SHUTOFF" {
		ui.Say(fmt.Sprintf("Stopping server %s...", id))
		// 409: it stopped on its own between the two calls, or a replayed
		// stop whose first answer was lost found it powering off; the
		// wait below tells.
		if err := servers.Stop(ctx, cl.compute, id).ExtractErr(); err != nil && !gophercloud.ResponseCodeIs(err, http.StatusConflict) {
			return halt(state, fmt.Errorf("stopping server %s: %w", id, err))
		}
	}
	if _, err := waitServer(ctx, cl, id, "SHUTOFF", c.StateTimeout); err != nil {
		return halt(state, err)
	}
	ui.Say(fmt.Sprintf("Server %s is SHUTOFF", id))
	return multistep.ActionContinue
}

func (s *StepStopServer) Cleanup(multistep.StateBag) {}
