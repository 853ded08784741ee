package cloud

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// volumePrefix is Cinder's API root for a project.
const volumePrefix = "/volume/v3/{project}"

// routes is Cinder v3 below authentication and the project check. Like
// Nova's, its collections answer 405 for a method they do not take.
func (cn *cinder) routes() *router {
	rt := newRouter()
	const p = volumePrefix
	locked := func(h routeFunc) routeFunc {
		return func(w http.ResponseWriter, r *http.Request, c *caller) {
			cn.mu.Lock()
			defer cn.mu.Unlock()
			h(w, r, c)
		}
	}
	rt.handle("POST "+p+"/volumes", locked(cn.createVolume))
	rt.handle("GET "+p+"/volumes", locked(cn.listVolumes))
	rt.handle("GET "+p+"/volumes/detail", locked(cn.listVolumes))
	rt.handle(p+"/volumes", locked(func(w http.ResponseWriter, _ *http.Request, _ *caller) { methodNotAllowed(w, SvcVolume) }))
	// Other methods on /volumes/detail: see oneVolume.
	rt.handle("GET "+p+"/volumes/{id}", cn.oneVolume(func(w http.ResponseWriter, _ *http.Request, _ *caller, v *volume) {
		writeJSON(w, http.StatusOK, obj{"volume": cn.volumeJSON(v, true)})
	}))
	rt.handle("PUT "+p+"/volumes/{id}", cn.oneVolume(cn.updateVolume))
	rt.handle("DELETE "+p+"/volumes/{id}", cn.oneVolume(cn.deleteVolume))
	rt.handle("POST "+p+"/volumes/{id}/action", cn.oneVolume(func(w http.ResponseWriter, r *http.Request, c *caller, v *volume) {
		cn.volumeAction(w, r, v, c.t)
	}))
	rt.handle("GET "+p+"/volumes/{id}/metadata", cn.oneVolume(func(w http.ResponseWriter, _ *http.Request, _ *caller, v *volume) {
		writeJSON(w, http.StatusOK, obj{"metadata": v.Meta})
	}))
	notFoundVol := func(w http.ResponseWriter, r *http.Request, _ *caller, _ *volume) { notFoundPath(w, r, SvcVolume) }
	rt.handle(p+"/volumes/{id}", cn.oneVolume(notFoundVol))
	rt.handle(p+"/volumes/{id}/{rest...}", cn.oneVolume(notFoundVol))

	rt.handle(p+"/types", cn.volumeTypes)
	rt.handle(p+"/types/{id}", cn.volumeTypes)
	rt.handle(p+"/types/{id}/{rest...}", cn.volumeTypes)
	zones := func(w http.ResponseWriter, _ *http.Request, _ *caller) {
		writeJSON(w, http.StatusOK, obj{"availabilityZoneInfo": []obj{{"zoneName": "nova", "zoneState": obj{"available": true}}}})
	}
	rt.handle(p+"/os-availability-zone", zones)
	rt.handle(p+"/os-availability-zone/{rest...}", zones)
	limits := func(w http.ResponseWriter, _ *http.Request, _ *caller) {
		writeJSON(w, http.StatusOK, obj{"limits": obj{"rate": []obj{}, "absolute": obj{"maxTotalVolumes": 100, "maxTotalVolumeGigabytes": 10000,
			"maxTotalSnapshots": 100, "maxTotalBackups": 100, "totalVolumesUsed": 0, "totalGigabytesUsed": 0}}})
	}
	rt.handle(p+"/limits", limits)
	rt.handle(p+"/limits/{rest...}", limits)
	snapshots := func(w http.ResponseWriter, r *http.Request, c *caller) {
		cn.serveSnapshots(w, r, splitPath(r.PathValue("rest")), c.t)
	}
	rt.handle(p+"/snapshots", snapshots)
	rt.handle(p+"/snapshots/{rest...}", snapshots)
	backups := func(w http.ResponseWriter, r *http.Request, c *caller) {
		cn.serveBackups(w, r, splitPath(r.PathValue("rest")), c.t)
	}
	rt.handle(p+"/backups", backups)
	rt.handle(p+"/backups/{rest...}", backups)
	for _, kind := range []string{"attachments", "groups"} {
		empty := func(w http.ResponseWriter, _ *http.Request, _ *caller) {
			writeJSON(w, http.StatusOK, obj{kind: []obj{}})
		}
		rt.handle("GET "+p+"/"+kind, empty)
		rt.handle("GET "+p+"/"+kind+"/detail", empty)
	}
	rt.handle("/", func(w http.ResponseWriter, r *http.Request, _ *caller) { notFoundPath(w, r, SvcVolume) })
	return rt
}

func (cn *cinder) volumeTypes(w http.ResponseWriter, r *http.Request, _ *caller) {
	out := []obj{}
	for _, vt := range cn.volTypes {
		out = append(out, obj{"id": vt.ID, "name": vt.Name, "description": nil, "is_public": true, "extra_specs": obj{}, "qos_specs_id": nil, "os-volume-type-access:is_public": true})
	}
	if id := r.PathValue("id"); id != "" && r.PathValue("rest") == "" {
		for i, vt := range cn.volTypes {
			if vt.ID == id || (id == "default" && i == 0) {
				writeJSON(w, http.StatusOK, obj{"volume_type": out[i]})
				return
			}
		}
		fail(w, SvcVolume, http.StatusNotFound, "", "Volume type "+id+" could not be found.")
		return
	}
	writeJSON(w, http.StatusOK, obj{"volume_types": out})
}

// listVolumes: cn.mu held.
func (cn *cinder) listVolumes(w http.ResponseWriter, r *http.Request, c *caller) {
	detail := strings.HasSuffix(r.URL.Path, "/volumes/detail")
	q := r.URL.Query()
	out := []obj{}
	for _, v := range sortedVolumes(cn.volumes) {
		if v.ProjectID != c.t.project.ID || !listed(v.listable) {
			continue
		}
		if n := q.Get("name"); n != "" && n != v.Name {
			continue
		}
		if st := q.Get("status"); st != "" && st != v.Status {
			continue
		}
		out = append(out, cn.volumeJSON(v, detail))
	}
	// newest first like Cinder's default created_at desc
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	writeJSON(w, http.StatusOK, obj{"volumes": out})
}

// oneVolume looks up the path's volume in the caller's project, with
// cn.mu held.
func (cn *cinder) oneVolume(h func(w http.ResponseWriter, r *http.Request, c *caller, v *volume)) routeFunc {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		cn.mu.Lock()
		defer cn.mu.Unlock()
		id := r.PathValue("id")
		if id == "detail" && strings.HasSuffix(r.URL.Path, "/volumes/detail") {
			// /volumes/detail is a collection: no volume is named so.
			methodNotAllowed(w, SvcVolume)
			return
		}
		v := cn.volumes[id]
		if v == nil || v.ProjectID != c.t.project.ID {
			fail(w, SvcVolume, http.StatusNotFound, "", "Volume "+id+" could not be found.")
			return
		}
		h(w, r, c, v)
	}
}

func (cn *cinder) updateVolume(w http.ResponseWriter, r *http.Request, _ *caller, v *volume) {
	var b struct {
		Volume struct {
			Name        *string           `json:"name"`
			Description *string           `json:"description"`
			Metadata    map[string]string `json:"metadata"`
		} `json:"volume"`
	}
	if err := decodeBody(r, &b); err != nil {
		fail(w, SvcVolume, http.StatusBadRequest, "", err.Error())
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
}

func (cn *cinder) deleteVolume(w http.ResponseWriter, r *http.Request, _ *caller, v *volume) {
	const svc = SvcVolume
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
			cn.uploadToImage(w, v, arg, t)
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
			cn.adminAction(w, v, action, arg, t)
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

// adminAction is os-reset_status or os-force_delete: Cinder's default
// policy keeps both for admins.
func (cn *cinder) adminAction(w http.ResponseWriter, v *volume, action string, arg json.RawMessage, t *token) {
	if !t.isAdmin() {
		fail(w, SvcVolume, http.StatusForbidden, "", "Policy doesn't allow volume_extension:volume_admin_actions:"+strings.TrimPrefix(action, "os-")+" to be performed.")
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
}

// uploadToImage is os-volume_upload_image: a new image that becomes
// active once the volume's disk is copied into it.
func (cn *cinder) uploadToImage(w http.ResponseWriter, v *volume, arg json.RawMessage, t *token) {
	const svc = SvcVolume
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
	// Cinder copies the volume's image metadata into the new image;
	// releases that copy Glance's reserved os_glance_* keys too get
	// Glance's refusal (official builder issue #123).
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
}
