package cloud

import (
	"net/http"
	"time"
)

// volumeRequest is the body of POST /volumes.
type volumeRequest struct {
	Size             any               `json:"size"`
	Name             string            `json:"name"`
	Description      string            `json:"description"`
	ImageRef         string            `json:"imageRef"`
	VolumeType       string            `json:"volume_type"`
	AvailabilityZone string            `json:"availability_zone"`
	Metadata         map[string]string `json:"metadata"`
	SourceVolID      string            `json:"source_volid"`
	SnapshotID       string            `json:"snapshot_id"`
}

// createVolume: cn.mu held.
func (cn *cinder) createVolume(w http.ResponseWriter, r *http.Request, c *caller) {
	var b struct {
		Volume volumeRequest `json:"volume"`
	}
	if err := decodeBody(r, &b); err != nil {
		fail(w, SvcVolume, http.StatusBadRequest, "", err.Error())
		return
	}
	v, e := cn.newVolumeFrom(b.Volume, c.t)
	var src diskSource
	if e == nil {
		src, e = cn.volumeSource(v, b.Volume, c.t)
	}
	if e != nil {
		fail(w, SvcVolume, e.status, "", e.msg)
		return
	}
	cn.register(v, src)
	writeJSON(w, http.StatusAccepted, obj{"volume": cn.volumeJSON(v, true)})
}

// newVolumeFrom checks the size, zone and type of a request.
func (cn *cinder) newVolumeFrom(bv volumeRequest, t *token) (*volume, *httpErr) {
	size, ok := anyInt(bv.Size)
	if !ok || size <= 0 {
		return nil, badRequest("Invalid input received: 'size' parameter must be an integer greater than 0.")
	}
	v := newVolume(bv.Name, size, t, time.Now())
	v.Description = bv.Description
	for k, val := range bv.Metadata {
		v.Meta[k] = val
	}
	if bv.AvailabilityZone != "" && bv.AvailabilityZone != "nova" {
		return nil, badRequest("Invalid input received: Availability zone '" + bv.AvailabilityZone + "' is invalid.")
	}
	if bv.VolumeType != "" {
		found := false
		for _, vt := range cn.volTypes {
			if vt.ID == bv.VolumeType || vt.Name == bv.VolumeType {
				v.VolumeType, found = vt.Name, true
			}
		}
		if !found {
			return nil, &httpErr{http.StatusNotFound, "Volume type with name " + bv.VolumeType + " could not be found."}
		}
	}
	return v, nil
}

// volumeSource is what the new volume is copied from: an image, another
// volume, a snapshot, or nothing.
func (cn *cinder) volumeSource(v *volume, bv volumeRequest, t *token) (diskSource, *httpErr) {
	var src diskSource
	switch {
	case bv.ImageRef != "":
		img := cn.c.image.imageCopy(bv.ImageRef)
		if img == nil || !visibleTo(img, t.project.ID, "") {
			return src, &httpErr{http.StatusNotFound, "Image " + bv.ImageRef + " could not be found."}
		}
		if img.Status != "active" {
			return src, badRequest("Invalid input received: Image " + img.ID + " is not active.")
		}
		if img.MinDisk > v.Size || (img.Size+(1<<30)-1)>>30 > int64(v.Size) {
			return src, badRequest("Invalid input received: Image minDisk size or image size is larger than the volume size.")
		}
		v.ImageID, v.imageMeta, v.Bootable = img.ID, volumeImageMeta(img), true
		src = imageSource(img)
	case bv.SourceVolID != "":
		sv := cn.volumes[bv.SourceVolID]
		if sv == nil {
			return src, &httpErr{http.StatusNotFound, "Volume " + bv.SourceVolID + " could not be found."}
		}
		src.disk, v.Bootable = sv.Disk, sv.Bootable
	case bv.SnapshotID != "":
		d, e := cn.snapshotSource(bv.SnapshotID, t.project.ID, v.Size)
		if e != nil {
			return src, e
		}
		src.disk, v.SnapshotID = d, bv.SnapshotID
	}
	return src, nil
}

// register makes v visible in "creating", with the faults armed for it,
// and copies src into its disk in the background.
func (cn *cinder) register(v *volume, src diskSource) {
	var fault string
	if cn.c.takeFault(FaultVolumeError, v.Name) != nil {
		fault = "error"
	} else if cn.c.takeFault(FaultVolumeStuck, v.Name) != nil {
		fault = "stuck"
		v.prevStatus = "stuck"
	}
	v.listable = cn.c.listableAt(v.Created)
	cn.volumes[v.ID] = v
	cn.c.goAfter(cn.c.took(cn.c.o.Timing.VolumeCreate, cn.c.diskBytes(src.disk)), func() {
		if fault == "stuck" {
			cn.c.logf("cloud: volume %s stuck in creating (injected)", v.ID)
			return
		}
		if fault == "error" {
			cn.mu.Lock()
			v.Status, v.Updated = "error", time.Now()
			cn.mu.Unlock()
			cn.c.logf("cloud: volume %s error (injected)", v.ID)
			return
		}
		cn.copyDisk("volume", v.ID, src, func() bool { return cn.volumes[v.ID] == v && v.Status == "creating" },
			func(disk, status string) { v.Disk, v.Status, v.Updated = disk, status, time.Now() })
	})
}
