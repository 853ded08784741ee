package openstack

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// StepRunServer creates the build server and waits until it is ACTIVE.
type StepRunServer struct {
	created string
}

func (s *StepRunServer) Run(ctx context.Context, state multistep.StateBag) multistep.StepAction {
	c := state.Get("config").(*Config)
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)

	builder := serverCreateOpts(state, c)

	ui.Say(fmt.Sprintf("Creating server %s...", c.InstanceName))
	srv, err := createOrAdopt(ctx, ui, "creating server "+c.InstanceName, func(ctx context.Context) (*servers.Server, error) {
		return servers.Create(ctx, cl.compute, builder, nil).Extract()
	}, func(ctx context.Context) (*servers.Server, bool, error) {
		return findServer(ctx, cl, c.InstanceName, c.buildID)
	})
	if err != nil {
		return halt(state, err)
	}
	s.created = srv.ID
	trackerOf(state).Add("server", srv.ID, c.InstanceName)
	state.Put("server_id", srv.ID)
	state.Put("instance_id", srv.ID) // read by the provision hook data
	setGenerated(state, "ServerID", srv.ID)

	ui.Say(fmt.Sprintf("Waiting for server %s to become ACTIVE...", srv.ID))
	srv, err = waitServer(ctx, cl, srv.ID, "ACTIVE", c.StateTimeout)
	if err != nil {
		return halt(state, err)
	}
	if c.RackconnectWait {
		ui.Say("Waiting for RackConnect automation...")
		if err := waitRackConnect(ctx, cl, srv.ID, c.StateTimeout); err != nil {
			return halt(state, err)
		}
	}
	state.Put("server", srv)
	ui.Say(fmt.Sprintf("Server %s is ACTIVE", srv.ID))
	return multistep.ActionContinue
}

// serverCreateOpts is the create request for the build server: the
// build's id in its metadata (findServer adopts by it), its NICs, and its
// boot source, a volume when one was made, else the source image.
func serverCreateOpts(state multistep.StateBag, c *Config) servers.CreateOptsBuilder {
	meta := map[string]string{BuildIDKey: c.buildID}
	for k, v := range c.InstanceMetadata {
		meta[k] = v
	}
	// Ports first, then networks, as the official builder: the first NIC
	// is the guest's primary interface (eth0, default route).
	var nets []servers.Network
	for _, p := range c.Ports {
		nets = append(nets, servers.Network{Port: p})
	}
	if ids, ok := state.Get("networks").([]string); ok {
		for _, id := range ids {
			nets = append(nets, servers.Network{UUID: id})
		}
	}
	opts := servers.CreateOpts{
		Name:             c.InstanceName,
		FlavorRef:        state.Get("flavor_id").(string),
		SecurityGroups:   c.SecurityGroups,
		UserData:         c.userData,
		AvailabilityZone: c.AvailabilityZone,
		Metadata:         meta,
	}
	if len(nets) > 0 {
		opts.Networks = nets
	}
	if c.ConfigDrive {
		opts.ConfigDrive = &c.ConfigDrive
	}
	if volID, ok := state.Get("volume_id").(string); ok && volID != "" {
		// The volume outlives the server: the image is uploaded from it.
		opts.BlockDevice = []servers.BlockDevice{{
			SourceType:          servers.SourceVolume,
			DestinationType:     servers.DestinationVolume,
			UUID:                volID,
			BootIndex:           0,
			DeleteOnTermination: false,
		}}
	} else {
		opts.ImageRef = state.Get("source_image_id").(string)
	}
	var builder servers.CreateOptsBuilder = opts
	if kp := getString(state, "keypair_name"); kp != "" {
		builder = keypairs.CreateOptsExt{CreateOptsBuilder: opts, KeyName: kp}
	}
	return builder
}

// waitRackConnect waits until RackConnect's automation reports the server
// deployed, failing at once when it reports failure.
func waitRackConnect(ctx context.Context, cl *clients, serverID string, timeout time.Duration) error {
	return waitFor(ctx, fmt.Sprintf("RackConnect to deploy server %s", serverID), timeout, func(ctx context.Context) (string, bool, error) {
		got, err := servers.Get(ctx, cl.compute, serverID).Extract()
		if err != nil {
			return "", false, err
		}
		st := got.Metadata["rackconnect_automation_status"]
		if strings.EqualFold(st, "FAILED") {
			return st, false, terminal("RackConnect failed on server %s", serverID)
		}
		return st, st == "DEPLOYED", nil
	})
}

// findServer finds the server a lost create made: named name, with the
// build's id in its metadata (other builds may use the same name).
func findServer(ctx context.Context, cl *clients, name, buildID string) (*servers.Server, bool, error) {
	all, err := listServers(ctx, cl, servers.ListOpts{Name: "^" + regexp.QuoteMeta(name) + "$"})
	if err != nil {
		return nil, false, err
	}
	for _, srv := range all {
		if srv.Name == name && srv.Metadata[BuildIDKey] == buildID {
			return &srv, true, nil
		}
	}
	return nil, false, nil
}

func (s *StepRunServer) Cleanup(state multistep.StateBag) {
	if s.created == "" {
		return
	}
	if deleted, _ := state.Get("server_deleted").(bool); deleted {
		// The volume upload already deleted it and waited.
		s.created = ""
		return
	}
	c := state.Get("config").(*Config)
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)
	ctx, cancel := cleanupContext(state, c)
	defer cancel()
	ui.Say(fmt.Sprintf("Deleting server %s...", s.created))
	// Waiting until it is gone frees the boot volume and ports for the
	// cleanups that follow.
	if err := deleteServer(ctx, cl, s.created, c.ForceDelete, c.StateTimeout); err != nil {
		ui.Error(fmt.Sprintf("Error deleting server %s: %s; delete it by hand", s.created, err))
		return
	}
	trackerOf(state).Done("server", s.created)
	s.created = ""
}
