package openstack

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// StepCreateVolume makes the boot volume from the source image
// (use_blockstorage_volume) and waits until it is available.
type StepCreateVolume struct {
	created string
}

func (s *StepCreateVolume) Run(ctx context.Context, state multistep.StateBag) multistep.StepAction {
	c := state.Get("config").(*Config)
	if !c.UseBlockStorageVolume {
		return multistep.ActionContinue
	}
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)
	size := volumeSize(c, state)
	ui.Say(fmt.Sprintf("Creating boot volume %s (%d GiB)...", c.VolumeName, size))
	opts := volumes.CreateOpts{
		Name:             c.VolumeName,
		Description:      "boot volume of Packer build " + c.buildName,
		Size:             size,
		ImageID:          state.Get("source_image_id").(string),
		VolumeType:       c.VolumeType,
		AvailabilityZone: c.VolumeAvailabilityZone,
		Metadata:         volumeMetadata(c),
	}
	v, err := createOrAdopt(ctx, ui, "creating boot volume "+c.VolumeName, func(ctx context.Context) (*volumes.Volume, error) {
		return volumes.Create(ctx, cl.volume, opts, nil).Extract()
	}, func(ctx context.Context) (*volumes.Volume, bool, error) {
		return findVolume(ctx, cl, c.VolumeName, c.buildID)
	})
	if err != nil {
		return halt(state, err)
	}
	s.created = v.ID
	trackerOf(state).Add("volume", v.ID, c.VolumeName)
	state.Put("volume_id", v.ID)
	if err := waitVolume(ctx, cl, v.ID, c.StateTimeout, "available"); err != nil {
		return halt(state, err)
	}
	return multistep.ActionContinue
}

// findVolume finds the volume a lost create made: named name, with the
// build's id in its metadata.
func findVolume(ctx context.Context, cl *clients, name, buildID string) (*volumes.Volume, bool, error) {
	pages, err := volumes.List(cl.volume, volumes.ListOpts{Name: name, Metadata: map[string]string{BuildIDKey: buildID}}).AllPages(ctx)
	if err != nil {
		return nil, false, err
	}
	all, err := volumes.ExtractVolumes(pages)
	if err != nil {
		return nil, false, err
	}
	for _, v := range all {
		// Checked here too: a cloud may ignore a filter.
		if v.Name == name && v.Metadata[BuildIDKey] == buildID {
			return &v, true, nil
		}
	}
	return nil, false, nil
}

// volumeSize is volume_size, or else the largest of the flavor's disk, the
// image's min_disk and the image's size, and at least 1 GiB.
func volumeSize(c *Config, state multistep.StateBag) int {
	if c.VolumeSize > 0 {
		return c.VolumeSize
	}
	size := 1
	if d, ok := state.Get("flavor_disk").(int); ok {
		size = max(size, d)
	}
	if d, ok := state.Get("source_image_min_disk").(int); ok {
		size = max(size, d)
	}
	if b, ok := state.Get("source_image_size").(int64); ok {
		size = max(size, int((b+(1<<30)-1)>>30))
	}
	return size
}

func (s *StepCreateVolume) Cleanup(state multistep.StateBag) {
	if s.created == "" {
		return
	}
	c := state.Get("config").(*Config)
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)
	ctx, cancel := cleanupContext(c)
	defer cancel()
	ui.Say(fmt.Sprintf("Deleting boot volume %s...", s.created))
	freeVolume(ctx, cl, c, ui, s.created)
	if err := deleteVolume(ctx, cl, s.created, c.StateTimeout); err != nil {
		ui.Error(fmt.Sprintf("Error deleting volume %s: %s; delete it by hand", s.created, err))
		return
	}
	trackerOf(state).Done("volume", s.created)
	s.created = ""
}

// freeVolume deletes the servers of this build still holding the volume,
// which no step may know (a server create whose answer was lost), so the
// volume's deletion need not wait for the sweep, which runs last.
func freeVolume(ctx context.Context, cl *clients, c *Config, ui packersdk.Ui, id string) {
	v, err := volumes.Get(ctx, cl.volume, id).Extract()
	if err != nil {
		return
	}
	for _, a := range v.Attachments {
		srv, err := servers.Get(ctx, cl.compute, a.ServerID).Extract()
		if err != nil || srv.Metadata[BuildIDKey] != c.buildID {
			continue
		}
		ui.Say(fmt.Sprintf("Deleting server %s of this build, which holds volume %s...", srv.ID, id))
		if err := deleteServer(ctx, cl, srv.ID, c.ForceDelete, c.StateTimeout); err != nil {
			ui.Error(fmt.Sprintf("Error deleting server %s: %s; delete it by hand", srv.ID, err))
		}
	}
}

// volumeMetadata is the boot volume's metadata: the image metadata, as the
// official builder sets it, and the build id.
func volumeMetadata(c *Config) map[string]string {
	m := map[string]string{}
	for k, v := range c.ImageMetadata {
		m[k] = v
	}
	m[BuildIDKey] = c.buildID
	return m
}
