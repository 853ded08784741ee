package openstack

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
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
	cctx, cancel := createCtx(ctx)
	defer cancel()
	v, err := volumes.Create(cctx, cl.volume, volumes.CreateOpts{
		Name:             c.VolumeName,
		Description:      "boot volume of Packer build " + c.buildName,
		Size:             size,
		ImageID:          state.Get("source_image_id").(string),
		VolumeType:       c.VolumeType,
		AvailabilityZone: c.VolumeAvailabilityZone,
		Metadata:         volumeMetadata(c),
	}, nil).Extract()
	if err != nil {
		return halt(state, fmt.Errorf("creating boot volume %s: %w", c.VolumeName, err))
	}
	s.created = v.ID
	trackerOf(state).Add("volume", v.ID, c.VolumeName)
	state.Put("volume_id", v.ID)
	if err := waitVolume(ctx, cl, v.ID, c.StateTimeout, "available"); err != nil {
		return halt(state, err)
	}
	return multistep.ActionContinue
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
	if err := deleteVolume(ctx, cl, s.created, c.StateTimeout); err != nil {
		ui.Error(fmt.Sprintf("Error deleting volume %s: %s; delete it by hand", s.created, err))
		return
	}
	trackerOf(state).Done("volume", s.created)
	s.created = ""
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
