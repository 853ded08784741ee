package openstack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// StepCreateImage makes the output image and waits until it is active:
// a Nova snapshot of the stopped server, or (use_blockstorage_volume) a
// Cinder upload of the boot volume once the server is gone. The server is
// never deleted while a snapshot is saving. A failed or half-made image is
// deleted on cleanup.
type StepCreateImage struct {
	created string
}

func (s *StepCreateImage) Run(ctx context.Context, state multistep.StateBag) multistep.StepAction {
	c := state.Get("config").(*Config)
	if c.SkipCreateImage {
		return multistep.ActionContinue
	}
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)
	serverID := state.Get("server_id").(string)

	var imageID string
	var err error
	if volID := getString(state, "volume_id"); volID != "" {
		imageID, err = s.fromVolume(ctx, state, c, cl, ui, serverID, volID)
	} else {
		imageID, err = s.fromServer(ctx, state, c, cl, ui, serverID)
	}
	if err != nil {
		return halt(state, err)
	}
	ui.Say(fmt.Sprintf("Waiting for image %s (%s) to become active...", c.ImageName, imageID))
	if err := waitImage(ctx, cl, imageID, c.ImageWaitTimeout); err != nil {
		return halt(state, err)
	}
	if c.ImageCreationWait > 0 {
		// The official meaning: some backends say active before the data
		// is settled. A plain delay, but Ctrl-C still ends it.
		ui.Say(fmt.Sprintf("Waiting %d more seconds (image_creation_wait)...", c.ImageCreationWait))
		t := time.NewTimer(time.Duration(c.ImageCreationWait) * time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return halt(state, fmt.Errorf("image_creation_wait: %w", ctx.Err()))
		case <-t.C:
		}
	}
	state.Put("image_id", imageID)
	setGenerated(state, "ImageID", imageID)
	setGenerated(state, "ImageName", c.ImageName)
	return multistep.ActionContinue
}

func (s *StepCreateImage) fromServer(ctx context.Context, state multistep.StateBag, c *Config, cl *clients, ui packersdk.Ui, serverID string) (string, error) {
	ui.Say(fmt.Sprintf("Creating image %s from server %s...", c.ImageName, serverID))
	meta := map[string]string{BuildIDKey: c.buildID}
	for k, v := range c.ImageMetadata {
		meta[k] = v
	}
	return s.create(ctx, state, c, cl, ui, fmt.Sprintf("creating image %s from server %s", c.ImageName, serverID), func(ctx context.Context) (string, error) {
		return servers.CreateImage(ctx, cl.compute, serverID, servers.CreateImageOpts{Name: c.ImageName, Metadata: meta}).ExtractImageID()
	})
}

// create makes the image with do (what says it in errors), or adopts the
// build's image when the answer was lost, and tracks it.
func (s *StepCreateImage) create(ctx context.Context, state multistep.StateBag, c *Config, cl *clients, ui packersdk.Ui, what string, do func(context.Context) (string, error)) (string, error) {
	id, err := createOrAdopt(ctx, ui, what, do, func(ctx context.Context) (string, bool, error) {
		return findBuildImage(ctx, cl, c.buildID, c.ImageName)
	})
	if err != nil {
		return "", err
	}
	s.created = id
	trackerOf(state).Add("image", id, c.ImageName)
	return id, nil
}

func (s *StepCreateImage) fromVolume(ctx context.Context, state multistep.StateBag, c *Config, cl *clients, ui packersdk.Ui, serverID, volID string) (string, error) {
	// Cinder uploads only a detached volume; the server's own cleanup will
	// find it already gone.
	ui.Say(fmt.Sprintf("Deleting server %s to free volume %s...", serverID, volID))
	if err := deleteServer(ctx, cl, serverID, c.ForceDelete, c.StateTimeout); err != nil {
		return "", err
	}
	trackerOf(state).Done("server", serverID)
	state.Put("server_deleted", true)
	if err := waitVolume(ctx, cl, volID, c.StateTimeout, "available"); err != nil {
		return "", err
	}
	if dropped, err := dropReservedImageMeta(ctx, cl, volID); err != nil {
		return "", err
	} else if len(dropped) > 0 {
		ui.Say(fmt.Sprintf("Removed Glance's reserved %s from the image metadata of volume %s", strings.Join(dropped, ", "), volID))
	}
	// As the official builder, the image metadata goes onto the volume:
	// Cinder copies a volume's image metadata into the image it uploads,
	// so the image has its properties, and the build id, from the moment
	// it exists (a lost answer can then be found). StepUpdateImage checks
	// them after.
	ui.Say(fmt.Sprintf("Setting image metadata on volume %s...", volID))
	if err := volumes.SetImageMetadata(ctx, cl.volume, volID, volumes.ImageMetadataOpts{Metadata: volumeMetadata(c)}).ExtractErr(); err != nil {
		// Not fatal: the properties are patched onto the image through
		// Glance once it is active.
		ui.Error(fmt.Sprintf("Warning: setting image metadata on volume %s: %s; it is set on the image after the upload instead, "+
			"and an upload whose answer is lost cannot be found by %s", volID, err, BuildIDKey))
	}
	format := c.ImageDiskFormat
	if format == "" {
		format = "raw"
	}
	ui.Say(fmt.Sprintf("Uploading volume %s to image %s (%s)...", volID, c.ImageName, format))
	opts := volumes.UploadImageOpts{
		ImageName:       c.ImageName,
		DiskFormat:      format,
		ContainerFormat: "bare",
		// No force: the volume is detached, and many clouds forbid it.
	}
	return s.create(ctx, state, c, cl, ui, fmt.Sprintf("uploading volume %s to an image", volID), func(ctx context.Context) (string, error) {
		res, err := volumes.UploadImage(ctx, cl.volume, volID, opts).Extract()
		return res.ImageID, err
	})
}

func (s *StepCreateImage) Cleanup(state multistep.StateBag) {
	if s.created == "" {
		return
	}
	if !buildFailed(state) {
		// The image is the artifact.
		trackerOf(state).Done("image", s.created)
		return
	}
	c := state.Get("config").(*Config)
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)
	ctx, cancel := cleanupContext(state, c)
	defer cancel()
	ui.Say(fmt.Sprintf("Deleting the unfinished image %s...", s.created))
	if err := deleteImage(ctx, cl, s.created, c.StateTimeout); err != nil {
		ui.Error(err.Error())
		return
	}
	trackerOf(state).Done("image", s.created)
	s.created = ""
}
