package openstack

import (
	"context"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
)

// waitImage waits for an image to become active, failing at once if
// Glance gives up on it (killed, deleted) or it vanishes.
func waitImage(ctx context.Context, cl *clients, id string, timeout time.Duration) error {
	return waitFor(ctx, fmt.Sprintf("image %s to become active", id), timeout, func(ctx context.Context) (string, bool, error) {
		img, err := images.Get(ctx, cl.image, id).Extract()
		if err != nil {
			if isNotFound(err) {
				return "gone", false, terminal("image %s was deleted while being created", id)
			}
			return "", false, err
		}
		switch img.Status {
		case images.ImageStatusActive:
			return string(img.Status), true, nil
		case images.ImageStatusKilled, images.ImageStatusDeleted, images.ImageStatusPendingDelete, images.ImageStatusDeactivated:
			return string(img.Status), false, terminal("image %s is %s: Glance failed to store it", id, img.Status)
		}
		return string(img.Status), false, nil
	})
}

// deleteImage deletes an image, first lifting protection a failed build
// may have set, and waits until Glance no longer lists it.
func deleteImage(ctx context.Context, cl *clients, id string, timeout time.Duration) error {
	err := images.Delete(ctx, cl.image, id).ExtractErr()
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		// A protected image refuses deletion (403); unprotect and retry.
		if _, uerr := images.Update(ctx, cl.image, id, images.UpdateOpts{images.ReplaceImageProtected{NewProtected: false}}).Extract(); uerr == nil {
			err = images.Delete(ctx, cl.image, id).ExtractErr()
		}
		if err != nil && !isNotFound(err) {
			return fmt.Errorf("deleting image %s: %w; delete it by hand", id, err)
		}
	}
	return waitFor(ctx, fmt.Sprintf("image %s to be deleted", id), timeout, func(ctx context.Context) (string, bool, error) {
		img, err := images.Get(ctx, cl.image, id).Extract()
		if isNotFound(err) {
			return "gone", true, nil
		}
		if err != nil {
			return "", false, err
		}
		return string(img.Status), img.Status == images.ImageStatusDeleted, nil
	})
}
