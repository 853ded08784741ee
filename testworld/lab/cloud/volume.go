package cloud

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cinder is the volume service. It calls into image (lookups, uploads)
// with its lock held, never into compute.
type cinder struct {
	c        *Cloud
	rt       *router   // the v3 API below authentication and the project check
	volTypes []volType // fixed at New

	mu        sync.Mutex
	volumes   map[string]*volume
	snapshots map[string]*volSnapshot
	backups   map[string]*volBackup
}

func newCinder(c *Cloud) *cinder {
	cn := &cinder{c: c, volumes: map[string]*volume{}, snapshots: map[string]*volSnapshot{}, backups: map[string]*volBackup{},
		volTypes: []volType{{ID: newUUID(), Name: "lvmdriver-1"}, {ID: newUUID(), Name: "__DEFAULT__"}}}
	cn.rt = cn.routes()
	return cn
}

type volType struct{ ID, Name string }

type volume struct {
	ID, Name, Description, Status string
	Size                          int
	AZ, VolumeType                string
	Meta                          map[string]string
	ImageID                       string
	imageMeta                     map[string]string
	Bootable                      bool
	Disk                          string
	ServerID                      string
	ProjectID, UserID             string
	Created, Updated, Attached    time.Time
	prevStatus                    string
	SnapshotID                    string
	listable                      time.Time
}

// newVolume builds (does not register) a volume.
func newVolume(name string, size int, t *token, now time.Time) *volume {
	return &volume{ID: newUUID(), Name: name, Status: "creating", Size: size, AZ: "nova", VolumeType: "lvmdriver-1",
		Meta: map[string]string{}, ProjectID: t.project.ID, UserID: t.user.ID, Created: now, Updated: now}
}

func volumeImageMeta(img *image) map[string]string {
	m := map[string]string{"image_id": img.ID, "image_name": img.Name, "disk_format": img.DiskFormat,
		"container_format": img.ContainerFormat, "min_disk": strconv.Itoa(img.MinDisk), "min_ram": strconv.Itoa(img.MinRAM),
		"size": strconv.FormatInt(img.Size, 10), "checksum": img.Checksum}
	for k, v := range img.Props {
		if s, ok := v.(string); ok {
			m[k] = s
		}
	}
	return m
}

func (cn *cinder) volumeJSON(v *volume, detail bool) obj {
	links := []obj{{"rel": "self", "href": cn.c.url + "/volume/v3/" + v.ProjectID + "/volumes/" + v.ID},
		{"rel": "bookmark", "href": cn.c.url + "/volume/" + v.ProjectID + "/volumes/" + v.ID}}
	if !detail {
		return obj{"id": v.ID, "name": v.Name, "links": links}
	}
	atts := []obj{}
	if v.ServerID != "" && (v.Status == "in-use" || v.Status == "uploading" || v.Status == "detaching") {
		atts = append(atts, obj{"id": v.ID, "attachment_id": v.ID[:8] + "-att", "volume_id": v.ID, "server_id": v.ServerID,
			"host_name": "lab", "device": "/dev/vda", "attached_at": tsMicro(v.Attached)})
	}
	meta := obj{}
	for k, val := range v.Meta {
		meta[k] = val
	}
	var desc any
	if v.Description != "" {
		desc = v.Description
	}
	o := obj{"id": v.ID, "name": v.Name, "status": v.Status, "size": v.Size, "availability_zone": v.AZ,
		"created_at": tsMicro(v.Created), "updated_at": tsMicro(v.Updated), "attachments": atts, "description": desc,
		"volume_type": v.VolumeType, "snapshot_id": nilIfEmpty(v.SnapshotID), "source_volid": nil, "metadata": meta, "links": links,
		"user_id": v.UserID, "bootable": strconv.FormatBool(v.Bootable), "encrypted": false, "replication_status": nil,
		"consistencygroup_id": nil, "multiattach": false, "os-vol-tenant-attr:tenant_id": v.ProjectID,
		"migration_status": nil, "group_id": nil, "provider_id": nil, "shared_targets": false,
		"os-vol-host-attr:host": "lab@lvmdriver-1#lvmdriver-1", "os-vol-mig-status-attr:migstat": nil, "os-vol-mig-status-attr:name_id": nil}
	if v.imageMeta != nil {
		o["volume_image_metadata"] = v.imageMeta
	}
	return o
}

func (cn *cinder) volumeVersion() obj {
	return obj{"id": "v3.0", "status": "CURRENT", "version": "3.70", "min_version": "3.0", "updated": "2023-08-31T00:00:00Z",
		"links":       []obj{{"rel": "describedby", "type": "text/html", "href": "https://docs.openstack.org/"}, {"rel": "self", "href": cn.c.url + "/volume/v3/"}},
		"media-types": []obj{{"base": "application/json", "type": "application/vnd.openstack.volume+json;version=3"}}}
}

func (cn *cinder) serve(w http.ResponseWriter, r *http.Request, segs []string) {
	const svc = SvcVolume
	if len(segs) == 0 {
		writeJSON(w, http.StatusMultipleChoices, obj{"versions": []obj{cn.volumeVersion()}})
		return
	}
	if segs[0] != "v3" {
		notFoundPath(w, r, svc)
		return
	}
	segs = segs[1:]
	if h := r.Header.Get("OpenStack-API-Version"); h != "" {
		f := strings.Fields(h)
		if len(f) == 2 && f[0] == "volume" {
			v := f[1]
			if v == "latest" {
				v = "3.70"
			}
			w.Header().Set("OpenStack-API-Version", "volume "+v)
			w.Header().Set("Vary", "OpenStack-API-Version")
		}
	}
	if len(segs) == 0 {
		writeJSON(w, http.StatusOK, obj{"versions": []obj{cn.volumeVersion()}})
		return
	}
	t := cn.c.authenticate(w, r)
	if t == nil {
		return
	}
	if segs[0] != t.project.ID {
		if _, ok := cn.c.identity.projects[segs[0]]; ok {
			fail(w, svc, http.StatusForbidden, "", "Policy doesn't allow this operation for project "+segs[0])
		} else {
			notFoundPath(w, r, svc)
		}
		return
	}
	segs = segs[1:]
	if len(segs) == 0 {
		notFoundPath(w, r, svc)
		return
	}
	cn.rt.serve(w, r, cleanPath(append([]string{"volume", "v3", t.project.ID}, segs...)), &caller{t: t})
}

// startDelete takes v to "deleting" and removes it (and its disk) after
// Timing.VolumeDelete; cn.mu held.
func (cn *cinder) startDelete(v *volume) {
	v.Status, v.Updated = "deleting", time.Now()
	cn.c.goAfter(cn.c.took(cn.c.o.Timing.VolumeDelete, 0), func() {
		cn.mu.Lock()
		d := v.Disk
		delete(cn.volumes, v.ID)
		cn.mu.Unlock()
		if d != "" {
			cn.c.deleteDisk(d)
		}
	})
}

// forceDelete deletes v whatever its status (os-force_delete, admin only);
// cn.mu held.
func (cn *cinder) forceDelete(v *volume) {
	if v.Status != "deleting" {
		cn.startDelete(v)
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
