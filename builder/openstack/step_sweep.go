package openstack

import (
	"context"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
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
	c := state.Get("config").(*Config)
	ctx, cancel := cleanupContext(c)
	defer cancel()
	sw := &sweeper{c: c, cl: raw.(*clients), ui: state.Get("ui").(packersdk.Ui), tr: trackerOf(state)}
	sw.servers(ctx)
	sw.floatingIPs(ctx)
	sw.volumes(ctx)
	sw.keypair(ctx)
	keep := ""
	if !buildFailed(state) {
		keep = getString(state, "image_id")
	}
	sw.images(ctx, keep)
}

// sweeper deletes one build's leftovers, kind by kind.
type sweeper struct {
	c  *Config
	cl *clients
	ui packersdk.Ui
	tr *tracker
}

// remove deletes one leftover and says so; a failure names it for a
// deletion by hand.
func (sw *sweeper) remove(kind, id string, del func() error) {
	sw.ui.Say(fmt.Sprintf("Deleting leftover %s %s of this build...", kind, id))
	if err := del(); err != nil {
		sw.ui.Error(fmt.Sprintf("Error deleting leftover %s %s of build %s: %s; delete it by hand", kind, id, sw.c.buildID, err))
	}
	sw.tr.Done(kind, id)
}

// listFailed says what could not be checked, rather than pass silently.
func (sw *sweeper) listFailed(kind string, err error) {
	sw.ui.Error(fmt.Sprintf("Warning: could not list %ss to sweep leftovers of build %s: %s; check for %ss with %s = %s by hand",
		kind, sw.c.buildID, err, kind, BuildIDKey, sw.c.buildID))
}

func (sw *sweeper) mine(m map[string]string) bool { return m[BuildIDKey] == sw.c.buildID }

func (sw *sweeper) servers(ctx context.Context) {
	all, err := listServers(ctx, sw.cl, servers.ListOpts{})
	if err != nil {
		sw.listFailed("server", err)
		return
	}
	for _, srv := range all {
		if sw.mine(srv.Metadata) {
			sw.remove("server", srv.ID, func() error { return deleteServer(ctx, sw.cl, srv.ID, sw.c.ForceDelete, sw.c.StateTimeout) })
		}
	}
}

func (sw *sweeper) floatingIPs(ctx context.Context) {
	if sw.cl.network == nil {
		return
	}
	all, err := ownFloatingIPs(ctx, sw.cl, sw.c)
	if err != nil {
		sw.listFailed("floating IP", err)
		return
	}
	for _, f := range all {
		sw.remove("floating IP", f.ID, func() error {
			if err := floatingips.Delete(ctx, sw.cl.network, f.ID).ExtractErr(); err != nil && !isNotFound(err) {
				return err
			}
			return nil
		})
	}
}

func (sw *sweeper) volumes(ctx context.Context) {
	if sw.cl.volume == nil {
		return
	}
	pages, err := volumes.List(sw.cl.volume, volumes.ListOpts{}).AllPages(ctx)
	var all []volumes.Volume
	if err == nil {
		all, err = volumes.ExtractVolumes(pages)
	}
	if err != nil {
		sw.listFailed("volume", err)
		return
	}
	for _, v := range all {
		if sw.mine(v.Metadata) {
			sw.remove("volume", v.ID, func() error { return deleteVolume(ctx, sw.cl, v.ID, sw.c.StateTimeout) })
		}
	}
}

// keypair: only a name this build made up; a given
// temporary_key_pair_name may belong to someone else.
func (sw *sweeper) keypair(ctx context.Context) {
	name := sw.c.Comm.SSHTemporaryKeyPairName
	if name == "" || !strings.Contains(name, sw.c.buildID) {
		return
	}
	_, err := keypairs.Get(ctx, sw.cl.compute, name, nil).Extract()
	switch {
	case isNotFound(err):
	case err != nil:
		sw.listFailed("keypair", err)
	default:
		sw.remove("keypair", name, func() error {
			if err := keypairs.Delete(ctx, sw.cl.compute, name, nil).ExtractErr(); err != nil && !isNotFound(err) {
				return err
			}
			return nil
		})
	}
}

// images: every image with the build's id, whatever its name (a snapshot,
// a volume upload, an imported source), but the artifact.
func (sw *sweeper) images(ctx context.Context, keep string) {
	all, err := buildImages(ctx, sw.cl, sw.c.buildID, "")
	if err != nil {
		sw.listFailed("image", err)
		return
	}
	for _, img := range all {
		if img.ID != keep {
			sw.remove("image", img.ID, func() error { return deleteImage(ctx, sw.cl, img.ID, sw.c.StateTimeout) })
		}
	}
}

// fipDescription marks floating IPs this build allocates.
func fipDescription(c *Config) string { return "Packer build " + c.buildName }
