package openstack

import (
	"context"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// StepSweep does nothing on Run; its Cleanup, which runs after every other
// step's, deletes anything still carrying this build's id. That catches
// what no step knows about: a create retried after a gateway timeout that
// had in fact succeeded, or a step interrupted between the API call and
// recording the id.
type StepSweep struct{}

func (s *StepSweep) Run(context.Context, multistep.StateBag) multistep.StepAction {
	return multistep.ActionContinue
}

func (s *StepSweep) Cleanup(state multistep.StateBag) {
	raw, ok := state.GetOk("clients")
	if !ok {
		return
	}
	cl := raw.(*clients)
	c := state.Get("config").(*Config)
	ui := state.Get("ui").(packersdk.Ui)
	ctx, cancel := cleanupContext(c)
	defer cancel()
	keep := ""
	if !buildFailed(state) {
		keep = getString(state, "image_id")
	}
	warn := func(kind, id string, err error) {
		ui.Error(fmt.Sprintf("Error deleting leftover %s %s of build %s: %s; delete it by hand", kind, id, c.buildID, err))
	}
	say := func(kind, id string) {
		ui.Say(fmt.Sprintf("Deleting leftover %s %s of this build...", kind, id))
	}
	mine := func(m map[string]string) bool { return m[BuildIDKey] == c.buildID }
	// A list that fails means leftovers may go unseen: say so, naming
	// what could not be checked, rather than pass silently.
	listFailed := func(kind string, err error) {
		ui.Error(fmt.Sprintf("Warning: could not list %ss to sweep leftovers of build %s: %s; check for %ss with %s = %s by hand", kind, c.buildID, err, kind, BuildIDKey, c.buildID))
	}

	if pages, err := servers.List(cl.compute, servers.ListOpts{}).AllPages(ctx); err != nil {
		listFailed("server", err)
	} else if all, err := servers.ExtractServers(pages); err != nil {
		listFailed("server", err)
	} else {
		for _, srv := range all {
			if mine(srv.Metadata) {
				say("server", srv.ID)
				if err := deleteServer(ctx, cl, srv.ID, c.ForceDelete, c.StateTimeout); err != nil {
					warn("server", srv.ID, err)
				}
				trackerOf(state).Done("server", srv.ID)
			}
		}
	}
	if cl.network != nil {
		if pages, err := floatingips.List(cl.network, floatingips.ListOpts{}).AllPages(ctx); err != nil {
			listFailed("floating IP", err)
		} else if all, err := floatingips.ExtractFloatingIPs(pages); err != nil {
			listFailed("floating IP", err)
		} else {
			for _, f := range all {
				if f.Description == fipDescription(c) {
					say("floating IP", f.FloatingIP)
					if err := floatingips.Delete(ctx, cl.network, f.ID).ExtractErr(); err != nil && !isNotFound(err) {
						warn("floating IP", f.ID, err)
					}
					trackerOf(state).Done("floating IP", f.ID)
				}
			}
		}
	}
	if cl.volume != nil {
		if pages, err := volumes.List(cl.volume, volumes.ListOpts{}).AllPages(ctx); err != nil {
			listFailed("volume", err)
		} else if all, err := volumes.ExtractVolumes(pages); err != nil {
			listFailed("volume", err)
		} else {
			for _, v := range all {
				if mine(v.Metadata) {
					say("volume", v.ID)
					if err := deleteVolume(ctx, cl, v.ID, c.StateTimeout); err != nil {
						warn("volume", v.ID, err)
					}
					trackerOf(state).Done("volume", v.ID)
				}
			}
		}
	}
	// Only a name this build made up: a given temporary_key_pair_name may
	// belong to someone else.
	if name := c.Comm.SSHTemporaryKeyPairName; name != "" && strings.Contains(name, c.buildID) {
		if _, err := keypairs.Get(ctx, cl.compute, name, nil).Extract(); err != nil && !isNotFound(err) {
			listFailed("keypair", err)
		} else if err == nil {
			say("keypair", name)
			if err := keypairs.Delete(ctx, cl.compute, name, nil).ExtractErr(); err != nil && !isNotFound(err) {
				warn("keypair", name, err)
			}
			trackerOf(state).Done("keypair", name)
		}
	}
	for _, name := range []string{c.ImageName, c.buildName + "-source"} {
		if name == "" {
			continue
		}
		pages, err := images.List(cl.image, images.ListOpts{Name: name}).AllPages(ctx)
		if err != nil {
			listFailed("image", err)
			continue
		}
		all, err := images.ExtractImages(pages)
		if err != nil {
			listFailed("image", err)
			continue
		}
		for _, img := range all {
			if img.ID == keep || fmt.Sprint(img.Properties[BuildIDKey]) != c.buildID {
				continue
			}
			say("image", img.ID)
			if err := deleteImage(ctx, cl, img.ID, c.StateTimeout); err != nil {
				warn("image", img.ID, err)
			}
			trackerOf(state).Done("image", img.ID)
		}
	}
}

// fipDescription marks floating IPs this build allocates.
func fipDescription(c *Config) string { return "Packer build " + c.buildName }
