package cloud

import (
	"encoding/json"
	"fmt"
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
	volTypes []volType // fixed at New

	mu        sync.Mutex
	volumes   map[string]*volume
	snapshots map[string]*volSnapshot
	backups   map[string]*volBackup
}

func newCinder(c *Cloud) *cinder {
	return &cinder{c: c, volumes: map[string]*volume{}, snapshots: map[string]*volSnapshot{}, backups: map[string]*volBackup{},
		volTypes: []volType{{ID: newUUID(), Name: "lvmdriver-1"}, {ID: newUUID(), Name: "__DEFAULT__"}}}
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
	switch segs[0] {
	case "volumes":
		cn.serveVolumes(w, r, segs[1:], t)
	case "types":
		out := []obj{}
		for _, vt := range cn.volTypes {
			out = append(out, obj{"id": vt.ID, "name": vt.Name, "description": nil, "is_public": true, "extra_specs": obj{}, "qos_specs_id": nil, "os-volume-type-access:is_public": true})
		}
		if len(segs) == 2 {
			for i, vt := range cn.volTypes {
				if vt.ID == segs[1] || (segs[1] == "default" && i == 0) {
					writeJSON(w, http.StatusOK, obj{"volume_type": out[i]})
					return
				}
			}
			fail(w, svc, http.StatusNotFound, "", "Volume type "+segs[1]+" could not be found.")
			return
		}
		writeJSON(w, http.StatusOK, obj{"volume_types": out})
	case "os-availability-zone":
		writeJSON(w, http.StatusOK, obj{"availabilityZoneInfo": []obj{{"zoneName": "nova", "zoneState": obj{"available": true}}}})
	case "limits":
		writeJSON(w, http.StatusOK, obj{"limits": obj{"rate": []obj{}, "absolute": obj{"maxTotalVolumes": 100, "maxTotalVolumeGigabytes": 10000,
			"maxTotalSnapshots": 100, "maxTotalBackups": 100, "totalVolumesUsed": 0, "totalGigabytesUsed": 0}}})
	case "snapshots":
		cn.serveSnapshots(w, r, segs[1:], t)
	case "backups":
		cn.serveBackups(w, r, segs[1:], t)
	case "attachments", "groups":
		if r.Method == http.MethodGet && (len(segs) == 1 || (len(segs) == 2 && segs[1] == "detail")) {
			writeJSON(w, http.StatusOK, obj{segs[0]: []obj{}})
			return
		}
		notFoundPath(w, r, svc)
	default:
		notFoundPath(w, r, svc)
	}
}

func (cn *cinder) serveVolumes(w http.ResponseWriter, r *http.Request, segs []string, t *token) {
	const svc = SvcVolume
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if len(segs) == 0 && r.Method == http.MethodPost {
		cn.createVolume(w, r, t)
		return
	}
	if len(segs) == 0 || (len(segs) == 1 && segs[0] == "detail") {
		if r.Method != http.MethodGet {
			methodNotAllowed(w, svc)
			return
		}
		q := r.URL.Query()
		out := []obj{}
		for _, v := range sortedVolumes(cn.volumes) {
			if v.ProjectID != t.project.ID || !listed(v.listable) {
				continue
			}
			if n := q.Get("name"); n != "" && n != v.Name {
				continue
			}
			if st := q.Get("status"); st != "" && st != v.Status {
				continue
			}
			out = append(out, cn.volumeJSON(v, len(segs) == 1))
		}
		// newest first like Cinder's default created_at desc
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
		writeJSON(w, http.StatusOK, obj{"volumes": out})
		return
	}
	v := cn.volumes[segs[0]]
	if v == nil || v.ProjectID != t.project.ID {
		fail(w, svc, http.StatusNotFound, "", "Volume "+segs[0]+" could not be found.")
		return
	}
	switch {
	case len(segs) == 1 && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, obj{"volume": cn.volumeJSON(v, true)})
	case len(segs) == 1 && r.Method == http.MethodPut:
		var b struct {
			Volume struct {
				Name        *string           `json:"name"`
				Description *string           `json:"description"`
				Metadata    map[string]string `json:"metadata"`
			} `json:"volume"`
		}
		if err := decodeBody(r, &b); err != nil {
			fail(w, svc, http.StatusBadRequest, "", err.Error())
			return
		}
		if b.Volume.Name != nil {
			v.Name = *b.Volume.Name
		}
		if b.Volume.Description != nil {
			v.Description = *b.Volume.Description
		}
		if b.Volume.Metadata != nil {
			v.Meta = b.Volume.Metadata
		}
		v.Updated = time.Now()
		writeJSON(w, http.StatusOK, obj{"volume": cn.volumeJSON(v, true)})
	case len(segs) == 1 && r.Method == http.MethodDelete:
		if snaps := cn.snapshotsOf(v.ID); len(snaps) > 0 {
			if r.URL.Query().Get("cascade") != "true" {
				fail(w, svc, http.StatusBadRequest, "", fmt.Sprintf("Invalid volume: Volume %s still has %d dependent snapshots.", v.ID, len(snaps)))
				return
			}
			for _, sn := range snaps {
				if sn.Status != "deleting" {
					cn.deleteSnapshot(sn)
				}
			}
		}
		switch v.Status {
		case "available", "error", "error_restoring", "error_extending", "error_managing":
		case "in-use", "attaching", "detaching", "uploading":
			fail(w, svc, http.StatusBadRequest, "", "Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.")
			return
		default:
			if v.Status == "creating" && r.URL.Query().Get("force") == "" && v.prevStatus != "stuck" {
				fail(w, svc, http.StatusBadRequest, "", "Invalid volume: Volume status must be available or error, but current status is: creating.")
				return
			}
			if v.Status == "deleting" {
				fail(w, svc, http.StatusBadRequest, "", "Invalid volume: Volume status must be available or error, but current status is: deleting.")
				return
			}
		}
		cn.startDelete(v)
		w.WriteHeader(http.StatusAccepted)
	case len(segs) == 2 && segs[1] == "action" && r.Method == http.MethodPost:
		cn.volumeAction(w, r, v, t)
	case len(segs) == 2 && segs[1] == "metadata" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, obj{"metadata": v.Meta})
	default:
		notFoundPath(w, r, svc)
	}
}

// createVolume: cn.mu held.
func (cn *cinder) createVolume(w http.ResponseWriter, r *http.Request, t *token) {
	const svc = SvcVolume
	var b struct {
		Volume struct {
			Size             any               `json:"size"`
			Name             string            `json:"name"`
			Description      string            `json:"description"`
			ImageRef         string            `json:"imageRef"`
			VolumeType       string            `json:"volume_type"`
			AvailabilityZone string            `json:"availability_zone"`
			Metadata         map[string]string `json:"metadata"`
			SourceVolID      string            `json:"source_volid"`
			SnapshotID       string            `json:"snapshot_id"`
		} `json:"volume"`
	}
	if err := decodeBody(r, &b); err != nil {
		fail(w, svc, http.StatusBadRequest, "", err.Error())
		return
	}
	bv := b.Volume
	size, ok := anyInt(bv.Size)
	if !ok || size <= 0 {
		fail(w, svc, http.StatusBadRequest, "", "Invalid input received: 'size' parameter must be an integer greater than 0.")
		return
	}
	v := newVolume(bv.Name, size, t, time.Now())
	v.Description = bv.Description
	for k, val := range bv.Metadata {
		v.Meta[k] = val
	}
	if bv.AvailabilityZone != "" {
		if bv.AvailabilityZone != "nova" {
			fail(w, svc, http.StatusBadRequest, "", "Invalid input received: Availability zone '"+bv.AvailabilityZone+"' is invalid.")
			return
		}
	}
	if bv.VolumeType != "" {
		found := false
		for _, vt := range cn.volTypes {
			if vt.ID == bv.VolumeType || vt.Name == bv.VolumeType {
				v.VolumeType, found = vt.Name, true
			}
		}
		if !found {
			fail(w, svc, http.StatusNotFound, "", "Volume type with name "+bv.VolumeType+" could not be found.")
			return
		}
	}
	var src diskSource
	if bv.ImageRef != "" {
		img := cn.c.image.imageCopy(bv.ImageRef)
		if img == nil || !visibleTo(img, t.project.ID, "") {
			fail(w, svc, http.StatusNotFound, "", "Image "+bv.ImageRef+" could not be found.")
			return
		}
		if img.Status != "active" {
			fail(w, svc, http.StatusBadRequest, "", "Invalid input received: Image "+img.ID+" is not active.")
			return
		}
		if img.MinDisk > size || (img.Size+(1<<30)-1)>>30 > int64(size) {
			fail(w, svc, http.StatusBadRequest, "", "Invalid input received: Image minDisk size or image size is larger than the volume size.")
			return
		}
		v.ImageID, v.imageMeta, v.Bootable = img.ID, volumeImageMeta(img), true
		src = imageSource(img)
	} else if bv.SourceVolID != "" {
		sv := cn.volumes[bv.SourceVolID]
		if sv == nil {
			fail(w, svc, http.StatusNotFound, "", "Volume "+bv.SourceVolID+" could not be found.")
			return
		}
		src.disk, v.Bootable = sv.Disk, sv.Bootable
	} else if bv.SnapshotID != "" {
		d, e := cn.snapshotSource(bv.SnapshotID, t.project.ID, size)
		if e != nil {
			fail(w, svc, e.status, "", e.msg)
			return
		}
		src.disk, v.SnapshotID = d, bv.SnapshotID
	}
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
	writeJSON(w, http.StatusAccepted, obj{"volume": cn.volumeJSON(v, true)})
}

// volumeAction: cn.mu held.
func (cn *cinder) volumeAction(w http.ResponseWriter, r *http.Request, v *volume, t *token) {
	const svc = SvcVolume
	var body map[string]json.RawMessage
	if err := decodeBody(r, &body); err != nil || len(body) != 1 {
		fail(w, svc, http.StatusBadRequest, "", "Malformed request body")
		return
	}
	for action, arg := range body {
		switch action {
		case "os-volume_upload_image":
			var a struct {
				ImageName       string `json:"image_name"`
				DiskFormat      string `json:"disk_format"`
				ContainerFormat string `json:"container_format"`
				Force           any    `json:"force"`
				Visibility      string `json:"visibility"`
				Protected       any    `json:"protected"`
			}
			if err := json.Unmarshal(arg, &a); err != nil || a.ImageName == "" {
				fail(w, svc, http.StatusBadRequest, "", "No image_name was specified in request.")
				return
			}
			if !(v.Status == "available" || (v.Status == "in-use" && anyBool(a.Force))) {
				fail(w, svc, http.StatusBadRequest, "", "Invalid volume: Volume "+v.ID+" status must be available or in-use with force, but current status is: "+v.Status+".")
				return
			}
			if a.DiskFormat == "" {
				a.DiskFormat = "raw"
			}
			if a.ContainerFormat == "" {
				a.ContainerFormat = "bare"
			}
			// Cinder copies the volume's image metadata into the new
			// image; releases that copy Glance's reserved os_glance_*
			// keys too get Glance's refusal (official builder issue #123).
			for k := range v.imageMeta {
				if strings.HasPrefix(k, "os_glance") {
					fail(w, svc, http.StatusForbidden, "", "HTTP 403 Forbidden: Access was denied to this resource.: Attribute '"+k+"' is reserved.")
					return
				}
			}
			img := newImage(a.ImageName, t.project.ID)
			img.DiskFormat, img.ContainerFormat = a.DiskFormat, a.ContainerFormat
			img.Visibility = "private"
			if a.Visibility != "" {
				img.Visibility = a.Visibility
			}
			img.Protected = anyBool(a.Protected)
			img.MinDisk = v.Size
			for k, val := range v.imageMeta {
				switch k {
				case "image_id", "image_name", "disk_format", "container_format", "min_disk", "min_ram", "size", "checksum":
				default:
					img.Props[k] = val
				}
			}
			cn.c.image.add(img)
			v.prevStatus, v.Status, v.Updated = v.Status, "uploading", time.Now()
			src := v.Disk
			cn.c.goAfter(cn.c.took(cn.c.o.Timing.VolumeUpload, cn.c.diskBytes(src)), func() {
				cn.c.image.saveImageFromDisk(img, src, func() {
					cn.mu.Lock()
					defer cn.mu.Unlock()
					if cn.volumes[v.ID] == v && v.Status == "uploading" {
						v.Status, v.Updated = v.prevStatus, time.Now()
						v.prevStatus = ""
					}
				})
			})
			writeJSON(w, http.StatusAccepted, obj{"os-volume_upload_image": obj{
				"id": v.ID, "updated_at": tsMicro(v.Updated), "status": "uploading", "display_description": v.Description,
				"size": v.Size, "volume_type": obj{"id": cn.volTypes[0].ID, "name": v.VolumeType}, "image_id": img.ID,
				"container_format": img.ContainerFormat, "disk_format": img.DiskFormat, "image_name": img.Name,
				"visibility": img.Visibility, "protected": img.Protected}})
		case "os-set_image_metadata":
			cn.setImageMetadata(w, v, arg)
		case "os-unset_image_metadata":
			cn.unsetImageMetadata(w, v, arg)
		case "os-set_bootable":
			var a struct {
				Bootable any `json:"bootable"`
			}
			_ = json.Unmarshal(arg, &a) // a bad body leaves the zero value, refused or ignored below as Cinder does
			v.Bootable = anyBool(a.Bootable)
			w.WriteHeader(http.StatusOK)
		case "os-reset_status", "os-force_delete":
			// Cinder's default policy keeps both for admins.
			if !t.isAdmin() {
				fail(w, svc, http.StatusForbidden, "", "Policy doesn't allow volume_extension:volume_admin_actions:"+strings.TrimPrefix(action, "os-")+" to be performed.")
				return
			}
			if action == "os-force_delete" {
				cn.forceDelete(v)
				w.WriteHeader(http.StatusAccepted)
				return
			}
			var a struct {
				Status string `json:"status"`
			}
			_ = json.Unmarshal(arg, &a) // a bad body leaves the zero value, refused or ignored below as Cinder does
			if a.Status != "" {
				v.Status = a.Status
			}
			w.WriteHeader(http.StatusAccepted)
		case "os-extend":
			var a struct {
				NewSize any `json:"new_size"`
			}
			_ = json.Unmarshal(arg, &a) // a bad body leaves the zero value, refused or ignored below as Cinder does
			n, ok := anyInt(a.NewSize)
			if !ok || n <= v.Size || v.Status != "available" {
				fail(w, svc, http.StatusBadRequest, "", "Invalid input received: New size for extend must be greater than current size.")
				return
			}
			v.Size = n
			w.WriteHeader(http.StatusAccepted)
		default:
			fail(w, svc, http.StatusBadRequest, "", "There is no such action: "+action)
		}
	}
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
