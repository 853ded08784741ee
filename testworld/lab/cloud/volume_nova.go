package cloud

import (
	"net/http"
	"time"
)

// What the volume service offers compute, which calls these with its own
// lock held (compute comes before volume in the lock order). Nova keeps
// only volume ids; the volumes themselves stay cinder's.

// add registers a new volume.
func (cn *cinder) add(v *volume) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	v.listable = cn.c.listableAt(v.Created)
	cn.volumes[v.ID] = v
}

// checkBootable says why volume id of projectID cannot boot a server, or nil.
func (cn *cinder) checkBootable(id, projectID string) *httpErr {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	v := cn.volumes[id]
	if v == nil || v.ProjectID != projectID {
		return &httpErr{http.StatusBadRequest, "Volume " + id + " could not be found."}
	}
	if v.Status != "available" {
		return &httpErr{http.StatusBadRequest, "Invalid volume: volume '" + v.ID + "' status must be 'available'. Currently in '" + v.Status + "'"}
	}
	return nil
}

// reserve marks an existing volume as attaching to serverID (the new one
// is already "creating").
func (cn *cinder) reserve(id, serverID string, existing bool) *httpErr {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	v := cn.volumes[id]
	if v == nil {
		return &httpErr{http.StatusBadRequest, "Volume " + id + " could not be found."}
	}
	if existing {
		if v.Status != "available" {
			return &httpErr{http.StatusBadRequest, "Invalid volume: volume '" + v.ID + "' status must be 'available'. Currently in '" + v.Status + "'"}
		}
		v.Status = "attaching"
	}
	v.ServerID = serverID
	return nil
}

// bootFailed frees a volume made for a server whose build failed.
func (cn *cinder) bootFailed(id string) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if v := cn.volumes[id]; v != nil {
		v.Status, v.ServerID = "available", ""
	}
}

// diskOf is volume id's hypervisor disk ("" when none).
func (cn *cinder) diskOf(id string) string {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if v := cn.volumes[id]; v != nil {
		return v.Disk
	}
	return ""
}

// sizeAndDisk is volume id's size in GiB and disk; ok false when gone.
func (cn *cinder) sizeAndDisk(id string) (size int, disk string, ok bool) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if v := cn.volumes[id]; v != nil {
		return v.Size, v.Disk, true
	}
	return 0, "", false
}

// attached records that volume id now backs a booting server; a volume
// made for the server gets disk. False when the volume went meanwhile
// (the caller then owns disk).
func (cn *cinder) attached(id, disk string, created bool) bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	v := cn.volumes[id]
	if v == nil {
		return false
	}
	if created {
		v.Disk = disk
	}
	now := time.Now()
	v.Status, v.Attached, v.Updated = "in-use", now, now
	return true
}

// detach releases a deleted server's volumes: delete_on_termination ones
// go (their disks are returned for deletion), the others become available.
func (cn *cinder) detach(vols []attachedVol) []string {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	var disks []string
	for _, av := range vols {
		v := cn.volumes[av.ID]
		if v == nil {
			continue
		}
		if av.DeleteOnTermination {
			if v.Disk != "" {
				disks = append(disks, v.Disk)
			}
			delete(cn.volumes, v.ID)
		} else {
			v.Status, v.ServerID, v.Updated = "available", "", time.Now()
		}
	}
	return disks
}

// status lists live volumes for Cloud.Status.
func (cn *cinder) status() []StatusItem {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	out := []StatusItem{}
	for _, v := range cn.volumes {
		out = append(out, StatusItem{v.ID, v.Name, v.Status})
	}
	return out
}
