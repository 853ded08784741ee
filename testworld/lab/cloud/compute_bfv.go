package cloud

import (
	"encoding/json"
	"time"
)

// Snapshots of volume-backed servers, as Nova makes them: createImage
// snapshots the boot volume in Cinder and registers a zero-byte Glance
// image whose block_device_mapping property names that snapshot; booting
// the image makes a new volume from the snapshot. Deleting the image
// leaves the Cinder snapshot behind, as in OpenStack.

// bdmEntry is one entry of an image's block_device_mapping property.
type bdmEntry struct {
	BootIndex           int     `json:"boot_index"`
	DeleteOnTermination bool    `json:"delete_on_termination"`
	DestinationType     string  `json:"destination_type"`
	DeviceName          string  `json:"device_name"`
	SourceType          string  `json:"source_type"`
	SnapshotID          string  `json:"snapshot_id"`
	VolumeSize          int     `json:"volume_size"`
	VolumeID            *string `json:"volume_id"`
	ImageID             *string `json:"image_id"`
	NoDevice            *bool   `json:"no_device"`
	GuestFormat         *string `json:"guest_format"`
	DiskBus             string  `json:"disk_bus"`
	Tag                 *string `json:"tag"`
	VolumeType          *string `json:"volume_type"`
}

// snapshotMapping is the boot entry of img's block_device_mapping when img
// is a snapshot of a volume-backed server.
func snapshotMapping(img *image) (bdmEntry, bool) {
	if v, _ := img.Props["bdm_v2"].(string); v != "True" && v != "true" {
		return bdmEntry{}, false
	}
	raw, _ := img.Props["block_device_mapping"].(string)
	var bdm []bdmEntry
	if json.Unmarshal([]byte(raw), &bdm) != nil {
		return bdmEntry{}, false
	}
	for _, m := range bdm {
		if m.BootIndex == 0 && m.SourceType == "snapshot" && m.SnapshotID != "" {
			return m, true
		}
	}
	return bdmEntry{}, false
}

// snapshotVolumeBacked is createImage of a volume-backed server; nv.mu held.
func (nv *nova) snapshotVolumeBacked(s *server, name string, meta map[string]string, t *token) (*image, *httpErr) {
	boot := s.Volumes[0]
	size, _, ok := nv.c.volume.sizeAndDisk(boot.ID)
	if !ok {
		return nil, &httpErr{409, "Cannot 'createImage' instance " + s.ID + ": its boot volume is gone"}
	}
	img := newImage(name, t.project.ID)
	img.DiskFormat, img.ContainerFormat, img.Visibility, img.MinDisk = "raw", "bare", "private", size
	snap, e := nv.c.volume.snapshotForImage(boot.ID, name, func(status string) { nv.finishVolumeSnapshot(s, img, status) })
	if e != nil {
		return nil, e
	}
	bdm, _ := json.Marshal([]bdmEntry{{BootIndex: 0, DeleteOnTermination: boot.DeleteOnTermination, DestinationType: "volume",
		DeviceName: "/dev/vda", SourceType: "snapshot", SnapshotID: snap.ID, VolumeSize: size, DiskBus: "virtio"}})
	img.Props["image_type"] = "snapshot"
	img.Props["instance_uuid"] = s.ID
	img.Props["user_id"] = t.user.ID
	img.Props["owner_user_name"] = t.user.Name
	img.Props["owner_project_name"] = t.project.Name
	// The caller's metadata wins, but for the mapping Nova sets last.
	for k, v := range meta {
		img.Props[k] = v
	}
	img.Props["bdm_v2"] = "True"
	img.Props["block_device_mapping"] = string(bdm)
	img.Props["root_device_name"] = "/dev/vda"
	nv.c.image.add(img)
	s.TaskState = "image_snapshot"
	nv.c.logf("cloud: volume-backed server %s snapshot %s -> image %s", s.ID, snap.ID, img.ID)
	return img, nil
}

// finishVolumeSnapshot makes the image active (zero bytes) once Cinder's
// snapshot is available, or killed when it failed; no lock held.
func (nv *nova) finishVolumeSnapshot(s *server, img *image, status string) {
	nv.c.image.finishEmpty(img, status == "available")
	nv.mu.Lock()
	defer nv.mu.Unlock()
	if !s.deleted && s.TaskState == "image_snapshot" {
		s.TaskState, s.Updated = "", time.Now()
	}
}
