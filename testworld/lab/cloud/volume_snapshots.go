package cloud

import (
	"net/http"
	"strconv"
	"time"
)

// Cinder snapshots and backups. Both are copies of a volume's disk made
// in the background (creating -> available) and deleted in the background
// (deleting -> gone). A volume with snapshots cannot be deleted (unless
// with cascade=true), as in Cinder; a volume can be created from a
// snapshot. Nova's createImage of a volume-backed server makes one.

type volSnapshot struct {
	ID, Name, Description, Status string
	VolumeID                      string
	Size                          int
	Meta                          map[string]string
	ProjectID                     string
	Disk                          string
	Created, Updated              time.Time
	onReady                       func(status string) // run without cn.mu once available, "error" or "gone"
}

type volBackup struct {
	ID, Name, Description, Status string
	VolumeID                      string
	Size                          int
	ProjectID                     string
	Disk                          string
	Created, Updated              time.Time
}

func (cn *cinder) snapshotJSON(s *volSnapshot, detail bool) obj {
	o := obj{"id": s.ID, "name": s.Name, "status": s.Status, "volume_id": s.VolumeID, "size": s.Size,
		"description": s.Description, "created_at": tsMicro(s.Created), "updated_at": tsMicro(s.Updated),
		"metadata": s.Meta}
	if detail {
		o["os-extended-snapshot-attributes:project_id"] = s.ProjectID
		o["os-extended-snapshot-attributes:progress"] = "100%"
	}
	return o
}

func (cn *cinder) backupJSON(b *volBackup) obj {
	return obj{"id": b.ID, "name": b.Name, "status": b.Status, "volume_id": b.VolumeID, "size": b.Size,
		"description": b.Description, "created_at": tsMicro(b.Created), "updated_at": tsMicro(b.Updated),
		"availability_zone": "nova", "container": "backups", "object_count": 1, "is_incremental": false,
		"has_dependent_backups": false, "snapshot_id": nil, "fail_reason": nil,
		"links": []obj{{"rel": "self", "href": cn.c.url + "/volume/v3/" + b.ProjectID + "/backups/" + b.ID}}}
}

// newSnapshot registers a snapshot of v (available or, with force,
// in-use) and copies v's disk into it in the background; cn.mu held.
func (cn *cinder) newSnapshot(v *volume, name, desc string, meta map[string]string, force bool) (*volSnapshot, *httpErr) {
	if !(v.Status == "available" || (v.Status == "in-use" && force)) {
		return nil, &httpErr{http.StatusBadRequest, "Invalid volume: Volume " + v.ID + " status must be available or in-use with force, but current status is: " + v.Status + "."}
	}
	now := time.Now()
	s := &volSnapshot{ID: newUUID(), Name: name, Description: desc, Status: "creating", VolumeID: v.ID, Size: v.Size,
		Meta: map[string]string{}, ProjectID: v.ProjectID, Created: now, Updated: now}
	for k, val := range meta {
		s.Meta[k] = val
	}
	cn.snapshots[s.ID] = s
	src := v.Disk
	cn.c.goAfter(cn.c.took(cn.c.o.Timing.SnapshotCreate, 0), func() {
		final := cn.copyDisk("snapshot", s.ID, diskSource{disk: src}, func() bool { return cn.snapshots[s.ID] == s && s.Status == "creating" },
			func(disk, status string) { s.Disk, s.Status, s.Updated = disk, status, time.Now() })
		if s.onReady != nil {
			s.onReady(final)
		}
	})
	return s, nil
}

// copyDisk is the background half of making a volume, snapshot or
// backup: it makes a disk from src (a clone, or an image file unpacked)
// and, with cn.mu held, checks the resource still waits for it (current;
// otherwise the copy is dropped) and sets its disk
// and status ("available", or "error" when the copy failed). It returns
// that status, or "gone".
func (cn *cinder) copyDisk(kind, id string, src diskSource, current func() bool, set func(disk, status string)) string {
	disk, err := cn.c.makeDisk(src)
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if !current() {
		if err == nil {
			cn.c.goAfter(0, func() { cn.c.deleteDisk(disk) })
		}
		return "gone"
	}
	if err != nil {
		cn.c.logf("cloud: %s %s error: %v", kind, id, err)
		set("", "error")
		return "error"
	}
	set(disk, "available")
	cn.c.states.note(kind, id, "available")
	return "available"
}

// dropLater removes what a deleted snapshot or backup held after
// Timing.VolumeDelete; cn.mu held.
func (cn *cinder) dropLater(remove func() string) {
	cn.c.goAfter(cn.c.took(cn.c.o.Timing.VolumeDelete, 0), func() {
		cn.mu.Lock()
		d := remove()
		cn.mu.Unlock()
		if d != "" {
			cn.c.deleteDisk(d)
		}
	})
}

// deleteSnapshot starts deleting s; cn.mu held.
func (cn *cinder) deleteSnapshot(s *volSnapshot) {
	s.Status, s.Updated = "deleting", time.Now()
	cn.dropLater(func() string { delete(cn.snapshots, s.ID); return s.Disk })
}

// snapshotsOf counts v's snapshots; cn.mu held.
func (cn *cinder) snapshotsOf(id string) []*volSnapshot {
	var out []*volSnapshot
	for _, s := range cn.snapshots {
		if s.VolumeID == id {
			out = append(out, s)
		}
	}
	return out
}

func (cn *cinder) serveSnapshots(w http.ResponseWriter, r *http.Request, segs []string, t *token) {
	const svc = SvcVolume
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if len(segs) == 0 && r.Method == http.MethodPost {
		var b struct {
			Snapshot struct {
				VolumeID    string            `json:"volume_id"`
				Name        string            `json:"name"`
				Description string            `json:"description"`
				Force       any               `json:"force"`
				Metadata    map[string]string `json:"metadata"`
			} `json:"snapshot"`
		}
		if err := decodeBody(r, &b); err != nil {
			fail(w, svc, http.StatusBadRequest, "", err.Error())
			return
		}
		v := cn.volumes[b.Snapshot.VolumeID]
		if v == nil || v.ProjectID != t.project.ID {
			fail(w, svc, http.StatusNotFound, "", "Volume "+b.Snapshot.VolumeID+" could not be found.")
			return
		}
		s, e := cn.newSnapshot(v, b.Snapshot.Name, b.Snapshot.Description, b.Snapshot.Metadata, anyBool(b.Snapshot.Force))
		if e != nil {
			fail(w, svc, e.status, "", e.msg)
			return
		}
		writeJSON(w, http.StatusAccepted, obj{"snapshot": cn.snapshotJSON(s, true)})
		return
	}
	if len(segs) == 0 || (len(segs) == 1 && segs[0] == "detail") {
		if r.Method != http.MethodGet {
			methodNotAllowed(w, svc)
			return
		}
		q := r.URL.Query()
		out := []obj{}
		for _, s := range sortByCreated(cn.snapshots, func(s *volSnapshot) time.Time { return s.Created }, func(s *volSnapshot) string { return s.ID }) {
			if s.ProjectID != t.project.ID || (q.Get("volume_id") != "" && q.Get("volume_id") != s.VolumeID) ||
				(q.Get("name") != "" && q.Get("name") != s.Name) || (q.Get("status") != "" && q.Get("status") != s.Status) {
				continue
			}
			out = append(out, cn.snapshotJSON(s, len(segs) == 1))
		}
		writeJSON(w, http.StatusOK, obj{"snapshots": out})
		return
	}
	s := cn.snapshots[segs[0]]
	if s == nil || s.ProjectID != t.project.ID || len(segs) != 1 {
		fail(w, svc, http.StatusNotFound, "", "Snapshot "+segs[0]+" could not be found.")
		return
	}
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, obj{"snapshot": cn.snapshotJSON(s, true)})
	case http.MethodDelete:
		if s.Status != "available" && s.Status != "error" {
			fail(w, svc, http.StatusBadRequest, "", "Invalid snapshot: Snapshot status must be available or error, but current status is: "+s.Status+".")
			return
		}
		cn.deleteSnapshot(s)
		w.WriteHeader(http.StatusAccepted)
	default:
		methodNotAllowed(w, svc)
	}
}

func (cn *cinder) serveBackups(w http.ResponseWriter, r *http.Request, segs []string, t *token) {
	const svc = SvcVolume
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if len(segs) == 0 && r.Method == http.MethodPost {
		var b struct {
			Backup struct {
				VolumeID    string `json:"volume_id"`
				Name        string `json:"name"`
				Description string `json:"description"`
				Force       any    `json:"force"`
			} `json:"backup"`
		}
		if err := decodeBody(r, &b); err != nil {
			fail(w, svc, http.StatusBadRequest, "", err.Error())
			return
		}
		v := cn.volumes[b.Backup.VolumeID]
		if v == nil || v.ProjectID != t.project.ID {
			fail(w, svc, http.StatusNotFound, "", "Volume "+b.Backup.VolumeID+" could not be found.")
			return
		}
		if !(v.Status == "available" || (v.Status == "in-use" && anyBool(b.Backup.Force))) {
			fail(w, svc, http.StatusBadRequest, "", "Invalid volume: Volume to be backed up must be available or in-use, but the current status is \""+v.Status+"\".")
			return
		}
		now := time.Now()
		bk := &volBackup{ID: newUUID(), Name: b.Backup.Name, Description: b.Backup.Description, Status: "creating",
			VolumeID: v.ID, Size: v.Size, ProjectID: v.ProjectID, Created: now, Updated: now}
		cn.backups[bk.ID] = bk
		src := v.Disk
		cn.c.goAfter(cn.c.took(cn.c.o.Timing.BackupCreate, cn.c.diskBytes(src)), func() {
			cn.copyDisk("backup", bk.ID, diskSource{disk: src}, func() bool { return cn.backups[bk.ID] == bk && bk.Status == "creating" },
				func(disk, status string) { bk.Disk, bk.Status, bk.Updated = disk, status, time.Now() })
		})
		writeJSON(w, http.StatusAccepted, obj{"backup": obj{"id": bk.ID, "name": bk.Name,
			"links": []obj{{"rel": "self", "href": cn.c.url + "/volume/v3/" + bk.ProjectID + "/backups/" + bk.ID}}}})
		return
	}
	if len(segs) == 0 || (len(segs) == 1 && segs[0] == "detail") {
		if r.Method != http.MethodGet {
			methodNotAllowed(w, svc)
			return
		}
		out := []obj{}
		for _, b := range sortByCreated(cn.backups, func(b *volBackup) time.Time { return b.Created }, func(b *volBackup) string { return b.ID }) {
			if b.ProjectID == t.project.ID && (r.URL.Query().Get("volume_id") == "" || r.URL.Query().Get("volume_id") == b.VolumeID) {
				out = append(out, cn.backupJSON(b))
			}
		}
		writeJSON(w, http.StatusOK, obj{"backups": out})
		return
	}
	bk := cn.backups[segs[0]]
	if bk == nil || bk.ProjectID != t.project.ID || len(segs) != 1 {
		fail(w, svc, http.StatusNotFound, "", "Backup "+segs[0]+" could not be found.")
		return
	}
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, obj{"backup": cn.backupJSON(bk)})
	case http.MethodDelete:
		if bk.Status != "available" && bk.Status != "error" {
			fail(w, svc, http.StatusBadRequest, "", "Invalid backup: Backup status must be available or error")
			return
		}
		bk.Status, bk.Updated = "deleting", time.Now()
		cn.dropLater(func() string { delete(cn.backups, bk.ID); return bk.Disk })
		w.WriteHeader(http.StatusAccepted)
	default:
		methodNotAllowed(w, svc)
	}
}

// snapshotStatus lists live snapshots and backups for Cloud.Status.
func (cn *cinder) snapshotStatus() (snaps, backups []StatusItem) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	snaps, backups = []StatusItem{}, []StatusItem{}
	for _, s := range cn.snapshots {
		snaps = append(snaps, StatusItem{s.ID, s.Name, s.Status})
	}
	for _, b := range cn.backups {
		backups = append(backups, StatusItem{b.ID, b.Name, b.Status})
	}
	return snaps, backups
}

// snapshotSource checks snapshot id can make a volume of size GiB for
// projectID and returns its disk; cn.mu held.
func (cn *cinder) snapshotSource(id, projectID string, size int) (string, *httpErr) {
	s := cn.snapshots[id]
	if s == nil || s.ProjectID != projectID {
		return "", &httpErr{http.StatusNotFound, "Snapshot " + id + " could not be found."}
	}
	if s.Status != "available" {
		return "", &httpErr{http.StatusBadRequest, "Invalid snapshot: Originating snapshot status must be one of 'available' values"}
	}
	if size < s.Size {
		return "", &httpErr{http.StatusBadRequest, "Invalid input received: Volume size '" + strconv.Itoa(size) + "'GB cannot be smaller than the snapshot size " + strconv.Itoa(s.Size) + "GB. They must be >= original snapshot size."}
	}
	return s.Disk, nil
}

// snapshotForImage snapshots boot volume id of a server (in use, so
// forced) for Nova's createImage; onReady runs once the snapshot is
// available (or failed) without any lock held.
func (cn *cinder) snapshotForImage(id, name string, onReady func(status string)) (*volSnapshot, *httpErr) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	v := cn.volumes[id]
	if v == nil {
		return nil, &httpErr{http.StatusNotFound, "Volume " + id + " could not be found."}
	}
	s, e := cn.newSnapshot(v, "snapshot for "+name, "", nil, true)
	if e != nil {
		return nil, e
	}
	s.onReady = onReady
	cp := *s
	return &cp, nil
}

// checkSnapshot says why snapshot id cannot make a volume of size GiB for
// projectID, or nil.
func (cn *cinder) checkSnapshot(id, projectID string, size int) *httpErr {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	_, e := cn.snapshotSource(id, projectID, size)
	return e
}

// snapshotDisk is snapshot id's disk ("" when gone).
func (cn *cinder) snapshotDisk(id string) string {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if s := cn.snapshots[id]; s != nil {
		return s.Disk
	}
	return ""
}
