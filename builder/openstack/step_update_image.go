package openstack

import (
	"context"
	"fmt"
	"net/http"
	"sort"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/members"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
)

// StepUpdateImage sets what the image needs once it is active: properties
// (metadata, image_properties, the build id), removal of inherited
// properties (skip_inherited_properties), tags, min_disk, visibility,
// members and, last, protection. Glance's JSON patch works the same for
// snapshots and volume uploads, so nothing goes through Cinder's
// os-set_image_metadata.
type StepUpdateImage struct{}

func (s *StepUpdateImage) Run(ctx context.Context, state multistep.StateBag) multistep.StepAction {
	c := state.Get("config").(*Config)
	if c.SkipCreateImage {
		return multistep.ActionContinue
	}
	cl := state.Get("clients").(*clients)
	ui := state.Get("ui").(packersdk.Ui)
	id := state.Get("image_id").(string)

	img, err := images.Get(ctx, cl.image, id).Extract()
	if err != nil {
		return halt(state, fmt.Errorf("getting image %s: %w", id, err))
	}
	patch := imagePatch(c, img)
	if len(patch) > 0 {
		ui.Say(fmt.Sprintf("Updating image %s: %d change(s)...", id, len(patch)))
		if _, err := images.Update(ctx, cl.image, id, patch).Extract(); err != nil && !patchApplied(ctx, c, cl, id) {
			return halt(state, fmt.Errorf("updating image %s: %w", id, err))
		}
	}
	for _, m := range c.ImageMembers {
		ui.Say(fmt.Sprintf("Sharing image %s with project %s...", id, m))
		// 409: the project is a member already, e.g. by a replayed
		// request whose answer was lost.
		if _, err := members.Create(ctx, cl.image, id, m).Extract(); err != nil && !gophercloud.ResponseCodeIs(err, http.StatusConflict) {
			return halt(state, fmt.Errorf("image_members: adding %s: %w", m, err))
		}
		if c.ImageAutoAcceptMembers {
			if err := acceptMembership(ctx, &c.AccessConfig, cl, id, m); err != nil {
				return halt(state, fmt.Errorf("image_auto_accept_members: accepting for %s: %w", m, err))
			}
		}
	}
	if c.ImageProtected {
		// Last: a protected image refuses no patch, but is awkward to
		// clean up if a later call failed.
		if _, err := images.Update(ctx, cl.image, id, images.UpdateOpts{images.ReplaceImageProtected{NewProtected: true}}).Extract(); err != nil {
			return halt(state, fmt.Errorf("image_protected: %w", err))
		}
	}
	return multistep.ActionContinue
}

// patchApplied reports whether the image is as the template asks after a
// patch failed: a replayed patch whose first answer was lost fails (a
// property removed twice) although the change is there.
func patchApplied(ctx context.Context, c *Config, cl *clients, id string) bool {
	img, err := images.Get(ctx, cl.image, id).Extract()
	return err == nil && len(imagePatch(c, img)) == 0
}

// imagePatch is the JSON patch turning img into what the template asks
// for. Properties are added or replaced, skipped ones removed; sorted so
// requests are reproducible.
func imagePatch(c *Config, img *images.Image) images.UpdateOpts {
	want := map[string]string{BuildIDKey: c.buildID}
	for k, v := range c.ImageMetadata {
		want[k] = v
	}
	for k, v := range c.ImageProperties {
		want[k] = v
	}
	var patch images.UpdateOpts
	for _, k := range sortedKeys(want) {
		v := want[k]
		cur, ok := img.Properties[k]
		switch {
		case !ok:
			patch = append(patch, images.UpdateImageProperty{Op: images.AddOp, Name: k, Value: v})
		case fmt.Sprint(cur) != v:
			patch = append(patch, images.UpdateImageProperty{Op: images.ReplaceOp, Name: k, Value: v})
		}
	}
	skip := append([]string(nil), c.SkipInheritedProperties...)
	sort.Strings(skip)
	for _, k := range skip {
		if _, ok := img.Properties[k]; ok {
			if _, wanted := want[k]; !wanted {
				patch = append(patch, images.UpdateImageProperty{Op: images.RemoveOp, Name: k})
			}
		}
	}
	if len(c.ImageTags) > 0 {
		patch = append(patch, images.ReplaceImageTags{NewTags: c.ImageTags})
	}
	if c.ImageMinDisk > 0 && c.ImageMinDisk != img.MinDiskGigabytes {
		patch = append(patch, images.ReplaceImageMinDisk{NewMinDisk: c.ImageMinDisk})
	}
	if c.ImageVisibility != "" && images.ImageVisibility(c.ImageVisibility) != img.Visibility {
		patch = append(patch, images.UpdateVisibility{Visibility: images.ImageVisibility(c.ImageVisibility)})
	}
	return patch
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (s *StepUpdateImage) Cleanup(multistep.StateBag) {}
