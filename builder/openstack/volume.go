package openstack

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
)

// waitVolume waits for a volume to reach one of want, failing at once on
// any error status (error, error_restoring, error_extending, ...).
func waitVolume(ctx context.Context, cl *clients, id string, timeout time.Duration, want ...string) error {
	return waitFor(ctx, fmt.Sprintf("volume %s to become %s", id, strings.Join(want, " or ")), timeout, func(ctx context.Context) (string, bool, error) {
		v, err := volumes.Get(ctx, cl.volume, id).Extract()
		if err != nil {
			if isNotFound(err) {
				return "gone", false, gone("volume %s disappeared", id)
			}
			return "", false, err
		}
		if oneOf(v.Status, want...) {
			return v.Status, true, nil
		}
		if strings.HasPrefix(v.Status, "error") {
			return v.Status, false, terminal("volume %s is in status %s", id, v.Status)
		}
		return v.Status, false, nil
	})
}

// deleteVolume waits for a volume to be detached, deletes it and waits
// until it is gone. Idempotent: a missing volume is already deleted.
func deleteVolume(ctx context.Context, cl *clients, id string, timeout time.Duration) error {
	err := waitFor(ctx, fmt.Sprintf("volume %s to be detached", id), timeout, func(ctx context.Context) (string, bool, error) {
		v, err := volumes.Get(ctx, cl.volume, id).Extract()
		if isNotFound(err) {
			return "gone", true, nil
		}
		if err != nil {
			return "", false, err
		}
		switch v.Status {
		case "in-use", "attaching", "detaching", "creating", "downloading", "uploading", "reserved", "extending":
			return v.Status, false, nil
		}
		return v.Status, true, nil
	})
	if err != nil {
		return err
	}
	err = volumes.Delete(ctx, cl.volume, id, volumes.DeleteOpts{}).ExtractErr()
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting volume %s: %w", id, err)
	}
	return waitFor(ctx, fmt.Sprintf("volume %s to be deleted", id), timeout, func(ctx context.Context) (string, bool, error) {
		v, err := volumes.Get(ctx, cl.volume, id).Extract()
		if isNotFound(err) {
			return "gone", true, nil
		}
		if err != nil {
			return "", false, err
		}
		if v.Status == "error_deleting" {
			return v.Status, false, terminal("volume %s is error_deleting", id)
		}
		return v.Status, false, nil
	})
}

// dropReservedImageMeta removes the keys of Glance's reserved os_glance
// namespace from a volume's image metadata. Cinder copies that metadata
// into the image it uploads and Glance refuses those keys, which a volume
// made from an imported image carries (os_glance_failed_import: the
// official builder's issue #123). It returns the keys removed.
func dropReservedImageMeta(ctx context.Context, cl *clients, volID string) ([]string, error) {
	v, err := volumes.Get(ctx, cl.volume, volID).Extract()
	if err != nil {
		return nil, fmt.Errorf("reading the image metadata of volume %s: %w", volID, err)
	}
	var dropped []string
	for k := range v.VolumeImageMetadata {
		if !strings.HasPrefix(k, "os_glance") {
			continue
		}
		body := map[string]any{"os-unset_image_metadata": map[string]string{"key": k}}
		resp, err := cl.volume.Post(ctx, cl.volume.ServiceURL("volumes", volID, "action"), body, nil, &gophercloud.RequestOpts{OkCodes: []int{200}})
		if resp != nil {
			_ = resp.Body.Close()
		}
		if err != nil {
			return dropped, fmt.Errorf("removing Glance's reserved %s from the image metadata of volume %s: %w", k, volID, err)
		}
		dropped = append(dropped, k)
	}
	sort.Strings(dropped)
	return dropped, nil
}
