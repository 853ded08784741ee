package openstack

import (
	"context"
	"fmt"
	"net/url"
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
				return "gone", false, gone("image %s was deleted while being created", id)
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

// byBuildID lists the images carrying a build's id, as `openstack image
// list --property fatimage_build_id=...` does: Glance filters on any
// property.
type byBuildID struct {
	images.ListOpts
	buildID string
}

func (o byBuildID) ToImageListQuery() (string, error) {
	q, err := o.ListOpts.ToImageListQuery()
	if err != nil {
		return "", err
	}
	extra := url.Values{BuildIDKey: {o.buildID}}.Encode()
	if q == "" {
		return "?" + extra, nil
	}
	return q + "&" + extra, nil
}

// buildImages lists the images of build buildID, named name unless name
// is empty; the property is checked here too, as a cloud may ignore the
// filter.
func buildImages(ctx context.Context, cl *clients, buildID, name string) ([]images.Image, error) {
	pages, err := images.List(cl.image, byBuildID{ListOpts: images.ListOpts{Name: name}, buildID: buildID}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := images.ExtractImages(pages)
	if err != nil {
		return nil, err
	}
	var out []images.Image
	for _, img := range all {
		if fmt.Sprint(img.Properties[BuildIDKey]) == buildID && (name == "" || img.Name == name) {
			out = append(out, img)
		}
	}
	return out, nil
}

// findBuildImage finds the image a lost create made: named name, with the
// build's id, not given up by Glance.
func findBuildImage(ctx context.Context, cl *clients, buildID, name string) (string, bool, error) {
	all, err := buildImages(ctx, cl, buildID, name)
	if err != nil {
		return "", false, err
	}
	for _, img := range all {
		switch img.Status {
		case images.ImageStatusKilled, images.ImageStatusDeleted, images.ImageStatusPendingDelete:
			continue
		}
		return img.ID, true, nil
	}
	return "", false, nil
}
