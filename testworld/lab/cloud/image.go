package cloud

import (
	"bytes"
	"crypto/md5"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// glance is the image service. It calls into identity only (to resolve
// project names), which holds no lock for that.
type glance struct {
	c *Cloud

	dirOnce sync.Once // the image file directory, made on first use
	dir     string
	dirErr  error

	mu     sync.Mutex
	images map[string]*image
}

func newGlance(c *Cloud) *glance { return &glance{c: c, images: map[string]*image{}} }

type member struct {
	ID, Status       string
	Created, Updated time.Time
}

type image struct {
	ID, Name, Status            string
	DiskFormat, ContainerFormat string
	Visibility                  string
	Owner                       string
	MinDisk, MinRAM             int
	Protected, Hidden           bool
	Tags                        []string
	Props                       map[string]any
	Disk                        string // hypervisor disk id
	Data                        []byte
	hasData                     bool
	Size                        int64
	Checksum, HashValue         string
	Created, Updated            time.Time
	Members                     map[string]*member
	staged                      []byte
	listable                    time.Time
	file                        string // exported disk image (image_files.go)
	VirtualSize                 int64
}

func newImage(name, owner string) *image {
	now := time.Now()
	return &image{ID: newUUID(), Name: name, Status: "queued", Visibility: "shared", Owner: owner,
		Props: map[string]any{}, Tags: []string{}, Created: now, Updated: now, Members: map[string]*member{}}
}

// ImageDisk returns the hypervisor disk holding an image's content, for
// tests that inspect what a finished image carries.
func (c *Cloud) ImageDisk(id string) (string, bool) { return c.image.imageDisk(id) }

func (gl *glance) imageDisk(id string) (string, bool) {
	gl.mu.Lock()
	defer gl.mu.Unlock()
	if img := gl.images[id]; img != nil && img.Disk != "" {
		return img.Disk, true
	}
	return "", false
}

// AddImage preloads an active image.
func (c *Cloud) AddImage(s ImageSeed) (string, error) { return c.image.addImage(s) }

func (gl *glance) addImage(s ImageSeed) (string, error) {
	owner := gl.c.identity.projectID(s.Owner)
	if owner == "" {
		if s.Owner != "" {
			return "", fmt.Errorf("cloud: AddImage: unknown owner project %q", s.Owner)
		}
		owner = gl.c.identity.defaultProject()
	}
	img := newImage(s.Name, owner)
	if s.ID != "" {
		img.ID = s.ID
	}
	img.Status = "active"
	img.DiskFormat, img.ContainerFormat = s.DiskFormat, s.ContainerFormat
	if img.DiskFormat == "" {
		img.DiskFormat = "qcow2"
	}
	if img.ContainerFormat == "" {
		img.ContainerFormat = "bare"
	}
	img.Visibility = s.Visibility
	if img.Visibility == "" {
		img.Visibility = "public"
	}
	img.MinDisk, img.MinRAM, img.Protected = s.MinDisk, s.MinRAM, s.Protected
	img.Tags = append([]string{}, s.Tags...)
	for k, v := range s.Properties {
		img.Props[k] = v
	}
	img.Disk = s.Disk
	if !s.CreatedAt.IsZero() {
		img.Created, img.Updated = s.CreatedAt, s.CreatedAt
	}
	if s.Data != nil {
		img.setData(s.Data)
	} else if s.Disk != "" {
		f, err := gl.exportDisk(s.Disk, img.DiskFormat, img.ID)
		if err != nil {
			return "", fmt.Errorf("cloud: AddImage: %v", err)
		}
		if f != nil {
			img.setFile(f)
		} else {
			size, err := gl.c.o.Hypervisor.DiskSize(s.Disk)
			if err != nil {
				return "", fmt.Errorf("cloud: AddImage: %v", err)
			}
			img.setSynthetic(size)
		}
	}
	gl.mu.Lock()
	defer gl.mu.Unlock()
	if gl.images[img.ID] != nil {
		if img.file != "" {
			os.Remove(img.file)
		}
		return "", fmt.Errorf("cloud: AddImage: duplicate id %s", img.ID)
	}
	gl.images[img.ID] = img
	return img.ID, nil
}

func (i *image) setData(b []byte) {
	i.Data, i.hasData = b, true
	i.Size = int64(len(b))
	m := md5.Sum(b)
	h := sha512.Sum512(b)
	i.Checksum, i.HashValue = hex.EncodeToString(m[:]), hex.EncodeToString(h[:])
}

// setSynthetic sets size and (synthetic) hashes for disk-backed images.
func (i *image) setSynthetic(size int64) {
	i.Size = size
	key := []byte(i.ID + ":" + i.Disk + ":" + strconv.FormatInt(size, 10))
	m := md5.Sum(key)
	h := sha512.Sum512(key)
	i.Checksum, i.HashValue = hex.EncodeToString(m[:]), hex.EncodeToString(h[:])
}

// saveImageFromDisk clones src into img: queued -> saving -> active (or
// killed under fault injection). done runs at the end without gl.mu, so
// that it may take the lock of a service earlier in the lock order (the
// server or volume the image was made from).
func (gl *glance) saveImageFromDisk(img *image, src string, done func()) {
	if done != nil {
		defer done()
	}
	gl.mu.Lock()
	if gl.images[img.ID] != img { // deleted before the save began
		gl.mu.Unlock()
		return
	}
	img.Status, img.Updated = "saving", time.Now()
	format := img.DiskFormat
	gl.mu.Unlock()
	if !gl.c.sleep(gl.c.took(gl.c.o.Timing.ImageSave, gl.c.diskBytes(src))) {
		return
	}
	disk, err := gl.c.o.Hypervisor.CloneDisk(src)
	var size int64
	var file *imageFile
	if err == nil {
		size, err = gl.c.o.Hypervisor.DiskSize(disk)
	}
	if err == nil {
		file, err = gl.exportDisk(disk, format, img.ID)
	}
	gl.mu.Lock()
	defer gl.mu.Unlock()
	if gl.images[img.ID] != img { // deleted meanwhile
		if disk != "" {
			gl.c.goAfter(0, func() { gl.c.deleteDisk(disk) })
		}
		return
	}
	img.Updated = time.Now()
	if err != nil {
		gl.c.logf("cloud: image %s killed: %v", img.ID, err)
		img.Status = "killed"
		return
	}
	if gl.c.takeFault(FaultImageKilled, img.Name) != nil {
		gl.c.logf("cloud: image %s killed (injected)", img.ID)
		img.Status = "killed"
		gl.c.goAfter(0, func() { gl.c.deleteDisk(disk) })
		return
	}
	img.Disk = disk
	if file != nil {
		img.setFile(file)
	} else {
		img.setSynthetic(size)
	}
	img.Status = "active"
	gl.c.states.note("image", img.ID, "active")
	gl.c.logf("cloud: image %s (%s) active", img.ID, img.Name)
}

var imageCoreKeys = map[string]bool{"id": true, "name": true, "status": true, "visibility": true, "protected": true,
	"os_hidden": true, "checksum": true, "os_hash_algo": true, "os_hash_value": true, "owner": true, "size": true,
	"virtual_size": true, "min_ram": true, "min_disk": true, "disk_format": true, "container_format": true,
	"created_at": true, "updated_at": true, "tags": true, "self": true, "file": true, "schema": true,
	"direct_url": true, "locations": true, "stores": true}

func (gl *glance) imageJSON(i *image) obj {
	o := obj{}
	for k, v := range i.Props {
		o[k] = v
	}
	var size, checksum, algo, hash, df, cf any
	if i.Status == "active" {
		size = i.Size
		if i.Checksum != "" { // zero-byte images (volume-backed snapshots) have none
			checksum, algo, hash = i.Checksum, "sha512", i.HashValue
		}
	}
	if i.DiskFormat != "" {
		df = i.DiskFormat
	}
	if i.ContainerFormat != "" {
		cf = i.ContainerFormat
	}
	var name any
	if i.Name != "" {
		name = i.Name
	}
	o["id"], o["name"], o["status"], o["visibility"] = i.ID, name, i.Status, i.Visibility
	o["protected"], o["os_hidden"], o["owner"] = i.Protected, i.Hidden, i.Owner
	var vsize any
	if i.Status == "active" && i.VirtualSize > 0 {
		vsize = i.VirtualSize
	}
	o["size"], o["virtual_size"], o["checksum"], o["os_hash_algo"], o["os_hash_value"] = size, vsize, checksum, algo, hash
	o["min_ram"], o["min_disk"], o["disk_format"], o["container_format"] = i.MinRAM, i.MinDisk, df, cf
	o["created_at"], o["updated_at"] = tsZ(i.Created), tsZ(i.Updated)
	o["tags"] = append([]string{}, i.Tags...)
	o["self"], o["file"], o["schema"] = "/v2/images/"+i.ID, "/v2/images/"+i.ID+"/file", "/v2/schemas/image"
	return o
}

func (gl *glance) imageVersions() []obj {
	var out []obj
	for i, v := range []string{"v2.9", "v2.7", "v2.6", "v2.5", "v2.4", "v2.3", "v2.2", "v2.1", "v2.0"} {
		st := "SUPPORTED"
		if i == 0 {
			st = "CURRENT"
		}
		out = append(out, obj{"id": v, "status": st, "links": []obj{{"rel": "self", "href": gl.c.url + "/image/v2/"}}})
	}
	return out
}

// visible says whether project p can see i (and, for shared images, under
// which member status).
func visibleTo(i *image, p string, memberStatus string) bool {
	switch i.Visibility {
	case "public", "community":
		return true
	}
	if i.Owner == p {
		return true
	}
	if i.Visibility == "shared" {
		if m := i.Members[p]; m != nil {
			if memberStatus == "all" {
				return true
			}
			if memberStatus == "" {
				memberStatus = "accepted"
			}
			return m.Status == memberStatus
		}
	}
	return false
}

func (gl *glance) serve(w http.ResponseWriter, r *http.Request, segs []string) {
	const svc = SvcImage
	if len(segs) == 0 {
		writeJSON(w, http.StatusMultipleChoices, obj{"versions": gl.imageVersions()})
		return
	}
	if len(segs) == 1 && segs[0] == "versions" {
		writeJSON(w, http.StatusOK, obj{"versions": gl.imageVersions()})
		return
	}
	if segs[0] != "v2" {
		notFoundPath(w, r, svc)
		return
	}
	segs = segs[1:]
	t := gl.c.authenticate(w, r)
	if t == nil {
		return
	}
	if len(segs) == 0 {
		writeJSON(w, http.StatusMultipleChoices, obj{"versions": gl.imageVersions()})
		return
	}
	switch {
	case segs[0] == "schemas":
		writeJSON(w, http.StatusOK, obj{"name": strings.Join(segs[1:], "/"), "properties": obj{}, "additionalProperties": obj{"type": "string"}})
	case len(segs) == 2 && segs[0] == "info" && segs[1] == "import":
		writeJSON(w, http.StatusOK, obj{"import-methods": obj{"description": "Import methods available.", "type": "array", "value": []string{"glance-direct", "web-download"}}})
	case len(segs) == 2 && segs[0] == "info" && segs[1] == "stores":
		writeJSON(w, http.StatusOK, obj{"stores": []obj{{"id": "file", "default": true, "description": "lab"}}})
	case segs[0] == "images" && len(segs) == 1 && r.Method == http.MethodGet:
		gl.listImages(w, r, t)
	case segs[0] == "images" && len(segs) == 1 && r.Method == http.MethodPost:
		gl.createImage(w, r, t)
	case segs[0] == "images" && len(segs) >= 2:
		gl.serveOneImage(w, r, segs[1], segs[2:], t)
	default:
		notFoundPath(w, r, svc)
	}
}

func (gl *glance) createImage(w http.ResponseWriter, r *http.Request, t *token) {
	const svc = SvcImage
	var b map[string]any
	if err := decodeBody(r, &b); err != nil {
		fail(w, svc, http.StatusBadRequest, "", err.Error())
		return
	}
	gl.mu.Lock()
	defer gl.mu.Unlock()
	img := newImage("", t.project.ID)
	if id, ok := b["id"].(string); ok && id != "" {
		if gl.images[id] != nil {
			fail(w, svc, http.StatusConflict, "", "Image with identifier "+id+" already exists!")
			return
		}
		img.ID = id
	}
	for k, v := range b {
		if k == "id" {
			continue
		}
		if err := setImageField(img, k, v, true, t.isAdmin()); err != nil {
			fail(w, svc, err.status, "", err.msg)
			return
		}
	}
	gl.images[img.ID] = img
	w.Header().Set("Location", gl.c.url+"/image/v2/images/"+img.ID)
	writeJSON(w, http.StatusCreated, gl.imageJSON(img))
}

type httpErr struct {
	status int
	msg    string
}

func numInt(v any) (int, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return int(n), err == nil
	case float64:
		return int(x), true
	case int:
		return x, true
	}
	return 0, false
}

// setImageField applies one attribute; create allows setting core fields.
// Glance's default policy keeps publicizing an image and giving it to
// another project for admins.
func setImageField(img *image, k string, v any, create, admin bool) *httpErr {
	bad := func(msg string) *httpErr { return &httpErr{http.StatusBadRequest, msg} }
	switch k {
	case "name":
		s, ok := v.(string)
		if !ok && v != nil {
			return bad("Invalid value for name")
		}
		img.Name = s
	case "visibility":
		s, _ := v.(string)
		switch s {
		case "public", "private", "shared", "community":
			if s == "public" && img.Visibility != "public" && !admin {
				return &httpErr{http.StatusForbidden, "You are not authorized to complete publicize_image action."}
			}
			img.Visibility = s
		default:
			return bad("Invalid visibility value: " + s)
		}
	case "protected", "os_hidden":
		bv, ok := v.(bool)
		if !ok {
			return bad("Invalid value for " + k)
		}
		if k == "protected" {
			img.Protected = bv
		} else {
			img.Hidden = bv
		}
	case "min_disk", "min_ram":
		n, ok := numInt(v)
		if !ok || n < 0 {
			return bad("Invalid value for " + k)
		}
		if k == "min_disk" {
			img.MinDisk = n
		} else {
			img.MinRAM = n
		}
	case "disk_format", "container_format":
		s, _ := v.(string)
		if v != nil { // null is in the schema's enum
			if err := checkFormat(k, s); err != nil {
				return err
			}
		}
		if !create && img.Status != "queued" {
			return &httpErr{http.StatusForbidden, "Attribute " + k + " can be only replaced for a queued image."}
		}
		if k == "disk_format" {
			img.DiskFormat = s
		} else {
			img.ContainerFormat = s
		}
	case "tags":
		arr, ok := v.([]any)
		if !ok {
			return bad("Invalid value for tags")
		}
		img.Tags = []string{}
		for _, x := range arr {
			if s, ok := x.(string); ok && !contains(img.Tags, s) {
				img.Tags = append(img.Tags, s)
			}
		}
	case "owner":
		s, _ := v.(string)
		if s != img.Owner && !admin {
			return &httpErr{http.StatusForbidden, "Owner can't be updated by non admin."}
		}
		img.Owner = s
	default:
		if imageCoreKeys[k] {
			return &httpErr{http.StatusForbidden, "Attribute '" + k + "' is read-only."}
		}
		if n, ok := v.(json.Number); ok {
			v = n.String()
		}
		img.Props[k] = v
	}
	return nil
}

// imageListParams are the query parameters of GET /v2/images that are not
// property filters.
var imageListParams = map[string]bool{"name": true, "status": true, "visibility": true, "owner": true, "tag": true,
	"member_status": true, "sort": true, "sort_key": true, "sort_dir": true, "limit": true, "marker": true,
	"disk_format": true, "container_format": true, "id": true, "protected": true, "os_hidden": true,
	"size_min": true, "size_max": true, "created_at": true, "updated_at": true}

type sortSpec struct{ key, dir string }

func imageSortValue(i *image, key string) any {
	switch key {
	case "name":
		return i.Name
	case "created_at":
		return i.Created
	case "updated_at":
		return i.Updated
	case "status":
		return i.Status
	case "size":
		return i.Size
	case "id":
		return i.ID
	case "min_disk":
		return i.MinDisk
	case "min_ram":
		return i.MinRAM
	case "visibility":
		return i.Visibility
	case "owner":
		return i.Owner
	case "disk_format":
		return i.DiskFormat
	case "container_format":
		return i.ContainerFormat
	}
	return nil
}

func cmpAny(a, b any) int {
	switch x := a.(type) {
	case string:
		return strings.Compare(x, b.(string))
	case time.Time:
		return x.Compare(b.(time.Time))
	case int64:
		y := b.(int64)
		if x < y {
			return -1
		} else if x > y {
			return 1
		}
	case int:
		y := b.(int)
		if x < y {
			return -1
		} else if x > y {
			return 1
		}
	}
	return 0
}

func (gl *glance) listImages(w http.ResponseWriter, r *http.Request, t *token) {
	const svc = SvcImage
	q := r.URL.Query()
	var specs []sortSpec
	if s := q.Get("sort"); s != "" {
		for _, part := range strings.Split(s, ",") {
			kd := strings.SplitN(strings.TrimSpace(part), ":", 2)
			sp := sortSpec{key: kd[0], dir: "desc"}
			if len(kd) == 2 {
				sp.dir = kd[1]
			}
			specs = append(specs, sp)
		}
	} else {
		dirs := q["sort_dir"]
		for i, k := range q["sort_key"] {
			sp := sortSpec{key: k, dir: "desc"}
			if i < len(dirs) {
				sp.dir = dirs[i]
			} else if len(dirs) > 0 {
				sp.dir = dirs[len(dirs)-1]
			}
			specs = append(specs, sp)
		}
	}
	if len(specs) == 0 {
		specs = []sortSpec{{"created_at", "desc"}}
	}
	for _, sp := range specs {
		if imageSortValue(&image{}, sp.key) == nil {
			fail(w, svc, http.StatusBadRequest, "", "Invalid sort key: "+sp.key)
			return
		}
		if sp.dir != "asc" && sp.dir != "desc" {
			fail(w, svc, http.StatusBadRequest, "", "Invalid sort direction: "+sp.dir)
			return
		}
	}
	specs = append(specs, sortSpec{"id", specs[len(specs)-1].dir})
	limit := queryInt(r, "limit", 25)
	if limit < 0 {
		fail(w, svc, http.StatusBadRequest, "", "limit param must be positive")
		return
	}
	if limit > 1000 {
		limit = 1000
	}
	vis := q.Get("visibility")
	memberStatus := q.Get("member_status")
	gl.mu.Lock()
	defer gl.mu.Unlock()
	var sel []*image
	for _, i := range gl.images {
		if !visibleTo(i, t.project.ID, memberStatus) || !listed(i.listable) {
			continue
		}
		if i.Hidden && q.Get("os_hidden") != "true" {
			continue
		}
		if vis != "" && vis != "all" && i.Visibility != vis {
			continue
		}
		ok := true
		for _, f := range []string{"name", "status", "owner", "disk_format", "container_format", "id"} {
			v := q.Get(f)
			if v == "" {
				continue
			}
			var have string
			switch f {
			case "name":
				have = i.Name
			case "status":
				have = i.Status
			case "owner":
				have = i.Owner
			case "disk_format":
				have = i.DiskFormat
			case "container_format":
				have = i.ContainerFormat
			case "id":
				have = i.ID
			}
			if strings.HasPrefix(v, "in:") {
				if !contains(strings.Split(strings.TrimPrefix(v, "in:"), ","), have) {
					ok = false
				}
			} else if v != have {
				ok = false
			}
		}
		for _, tag := range q["tag"] {
			if !contains(i.Tags, tag) {
				ok = false
			}
		}
		if v := q.Get("protected"); v != "" && v != strconv.FormatBool(i.Protected) {
			ok = false
		}
		// extra property filters (e.g. ?os_distro=rocky)
		for k, vals := range q {
			if imageListParams[k] || len(vals) == 0 {
				continue
			}
			if pv, has := i.Props[k]; !has || fmt.Sprint(pv) != vals[0] {
				ok = false
			}
		}
		if ok {
			sel = append(sel, i)
		}
	}
	sort.SliceStable(sel, func(a, b int) bool {
		for _, sp := range specs {
			d := cmpAny(imageSortValue(sel[a], sp.key), imageSortValue(sel[b], sp.key))
			if d == 0 {
				continue
			}
			if sp.dir == "desc" {
				return d > 0
			}
			return d < 0
		}
		return false
	})
	if m := q.Get("marker"); m != "" {
		idx := -1
		for i, img := range sel {
			if img.ID == m {
				idx = i
			}
		}
		if idx < 0 {
			fail(w, svc, http.StatusBadRequest, "", "marker "+m+" could not be found.")
			return
		}
		sel = sel[idx+1:]
	}
	out := []obj{}
	for n, i := range sel {
		if n >= limit {
			break
		}
		out = append(out, gl.imageJSON(i))
	}
	resp := obj{"images": out, "first": "/v2/images", "schema": "/v2/schemas/images"}
	if len(sel) > limit && limit > 0 {
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("marker", sel[limit-1].ID)
		nq.Set("limit", strconv.Itoa(limit))
		resp["next"] = "/v2/images?" + nq.Encode()
	}
	writeJSON(w, http.StatusOK, resp)
}

func (gl *glance) memberJSON(i *image, m *member) obj {
	return obj{"image_id": i.ID, "member_id": m.ID, "status": m.Status, "created_at": tsZ(m.Created),
		"updated_at": tsZ(m.Updated), "schema": "/v2/schemas/member"}
}

func (gl *glance) serveOneImage(w http.ResponseWriter, r *http.Request, id string, rest []string, t *token) {
	const svc = SvcImage
	gl.mu.Lock()
	locked := true
	defer func() {
		if locked {
			gl.mu.Unlock()
		}
	}()
	img := gl.images[id]
	if img == nil || (!visibleTo(img, t.project.ID, "all") && !t.isAdmin()) {
		fail(w, svc, http.StatusNotFound, "", "No image found with ID "+id)
		return
	}
	// Admins may modify any image, as Glance's default policy allows.
	owner := img.Owner == t.project.ID || t.isAdmin()
	forbidden := func() {
		fail(w, svc, http.StatusForbidden, "", "You are not permitted to modify image "+id+".")
	}
	switch {
	case len(rest) == 0 && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, gl.imageJSON(img))
	case len(rest) == 0 && r.Method == http.MethodDelete:
		if !owner {
			forbidden()
			return
		}
		if img.Protected {
			fail(w, svc, http.StatusForbidden, "", "Image "+id+" is protected and cannot be deleted.")
			return
		}
		delete(gl.images, id)
		if img.file != "" {
			os.Remove(img.file)
		}
		if img.Disk != "" {
			d := img.Disk
			gl.mu.Unlock()
			locked = false
			gl.c.deleteDisk(d)
		}
		w.WriteHeader(http.StatusNoContent)
	case len(rest) == 0 && r.Method == http.MethodPatch:
		ct := r.Header.Get("Content-Type")
		if !strings.HasPrefix(ct, "application/openstack-images-v2.1-json-patch") && !strings.HasPrefix(ct, "application/openstack-images-v2.0-json-patch") {
			fail(w, svc, http.StatusUnsupportedMediaType, "", "Unsupported Content-Type")
			return
		}
		if !owner {
			forbidden()
			return
		}
		var ops []struct {
			Op    string `json:"op"`
			Path  string `json:"path"`
			Value any    `json:"value"`
		}
		if err := decodeBody(r, &ops); err != nil {
			fail(w, svc, http.StatusBadRequest, "", err.Error())
			return
		}
		// apply to a copy so that a failing op changes nothing
		cp := *img
		cp.Props = map[string]any{}
		for k, v := range img.Props {
			cp.Props[k] = v
		}
		cp.Tags = append([]string{}, img.Tags...)
		for _, op := range ops {
			key := strings.TrimPrefix(op.Path, "/")
			key = strings.ReplaceAll(strings.ReplaceAll(key, "~1", "/"), "~0", "~")
			if key == "" || strings.Contains(key, "/") {
				fail(w, svc, http.StatusBadRequest, "", "Invalid JSON pointer for this resource: '"+op.Path+"'")
				return
			}
			_, isProp := cp.Props[key]
			core := imageCoreKeys[key]
			switch op.Op {
			case "add", "replace":
				if op.Op == "replace" && !core && !isProp {
					fail(w, svc, http.StatusConflict, "", "Property "+key+" does not exist.")
					return
				}
				if e := setImageField(&cp, key, op.Value, false, t.isAdmin()); e != nil {
					fail(w, svc, e.status, "", e.msg)
					return
				}
			case "remove":
				if core {
					fail(w, svc, http.StatusForbidden, "", "Attribute '"+key+"' is read-only.")
					return
				}
				if !isProp {
					fail(w, svc, http.StatusConflict, "", "Property "+key+" does not exist.")
					return
				}
				delete(cp.Props, key)
			default:
				fail(w, svc, http.StatusBadRequest, "", "Unable to find '"+op.Op+"' operation")
				return
			}
		}
		cp.Updated = time.Now()
		*img = cp
		writeJSON(w, http.StatusOK, gl.imageJSON(img))
	case len(rest) == 2 && rest[0] == "tags" && (r.Method == http.MethodPut || r.Method == http.MethodDelete):
		if !owner {
			forbidden()
			return
		}
		tag := rest[1]
		if r.Method == http.MethodPut {
			if !contains(img.Tags, tag) {
				img.Tags = append(img.Tags, tag)
			}
		} else {
			if !contains(img.Tags, tag) {
				fail(w, svc, http.StatusNotFound, "", "Tag "+tag+" not found.")
				return
			}
			img.Tags = removeStr(img.Tags, tag)
		}
		img.Updated = time.Now()
		w.WriteHeader(http.StatusNoContent)
	case len(rest) == 1 && (rest[0] == "file" || rest[0] == "stage") && r.Method == http.MethodPut:
		if !owner {
			forbidden()
			return
		}
		if img.Status != "queued" {
			fail(w, svc, http.StatusConflict, "", "Image status transition from "+img.Status+" to saving is not allowed")
			return
		}
		if rest[0] == "stage" {
			img.Status = "uploading"
			gl.mu.Unlock()
			data, err := io.ReadAll(r.Body)
			gl.mu.Lock()
			if gl.images[id] != img {
				fail(w, svc, http.StatusGone, "", "Image "+id+" could not be found after upload.")
				return
			}
			if err != nil {
				img.Status = "queued"
				fail(w, svc, http.StatusBadRequest, "", err.Error())
				return
			}
			img.staged = data
			w.WriteHeader(http.StatusNoContent)
			return
		}
		img.Status = "saving"
		gl.mu.Unlock()
		ing, err := gl.ingest(r.Body, img.DiskFormat)
		gl.mu.Lock()
		if err := gl.finishIngest(img, ing, err); err != nil {
			fail(w, svc, err.status, "", err.msg)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case len(rest) == 1 && rest[0] == "import" && r.Method == http.MethodPost:
		if !owner {
			forbidden()
			return
		}
		var b struct {
			Method struct {
				Name string `json:"name"`
				URI  string `json:"uri"`
			} `json:"method"`
		}
		if err := decodeBody(r, &b); err != nil {
			fail(w, svc, http.StatusBadRequest, "", err.Error())
			return
		}
		var src func() (io.ReadCloser, error)
		switch b.Method.Name {
		case "web-download":
			if img.Status != "queued" {
				fail(w, svc, http.StatusConflict, "", "Image needs to be in 'queued' state to use 'web-download' method")
				return
			}
			uri := b.Method.URI
			src = func() (io.ReadCloser, error) {
				resp, err := http.Get(uri)
				if err != nil {
					return nil, err
				}
				if resp.StatusCode != http.StatusOK {
					resp.Body.Close()
					return nil, fmt.Errorf("GET %s: %s", uri, resp.Status)
				}
				return resp.Body, nil
			}
		case "glance-direct":
			if img.Status != "uploading" || img.staged == nil {
				fail(w, svc, http.StatusConflict, "", "Image needs to be staged before 'glance-direct' method can be used")
				return
			}
			data := img.staged
			img.staged = nil
			src = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		default:
			fail(w, svc, http.StatusBadRequest, "", "Import method "+b.Method.Name+" is not supported")
			return
		}
		img.Status = "importing"
		img.Updated = time.Now()
		// Glance's import flow records its progress in properties of its
		// reserved os_glance namespace; they stay (empty) on the image.
		img.Props["os_glance_importing_to_stores"], img.Props["os_glance_failed_import"] = "", ""
		format := img.DiskFormat
		gl.c.goAfter(gl.c.took(gl.c.o.Timing.ImageSave, 0), func() {
			var ing *ingested
			rc, err := src()
			if err == nil {
				ing, err = gl.ingest(rc, format)
				rc.Close()
			}
			gl.mu.Lock()
			defer gl.mu.Unlock()
			if e := gl.finishIngest(img, ing, err); e != nil {
				gl.c.logf("cloud: import into image %s: %s", img.ID, e.msg)
			}
		})
		w.WriteHeader(http.StatusAccepted)
	case len(rest) == 1 && rest[0] == "file" && r.Method == http.MethodGet:
		if img.Status == "active" && serveFile(w, img) {
			return
		}
		if img.Status != "active" || !img.hasData {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-MD5", img.Checksum)
		w.Header().Set("Content-Length", strconv.Itoa(len(img.Data)))
		w.WriteHeader(http.StatusOK)
		w.Write(img.Data)
	case len(rest) >= 1 && rest[0] == "members":
		gl.serveMembers(w, r, img, rest[1:], t)
	default:
		notFoundPath(w, r, svc)
	}
}

// serveMembers: gl.mu held.
func (gl *glance) serveMembers(w http.ResponseWriter, r *http.Request, img *image, rest []string, t *token) {
	const svc = SvcImage
	owner := img.Owner == t.project.ID || t.isAdmin()
	if len(rest) == 0 {
		switch r.Method {
		case http.MethodGet:
			out := []obj{}
			for _, m := range img.Members {
				if owner || m.ID == t.project.ID {
					out = append(out, gl.memberJSON(img, m))
				}
			}
			sort.Slice(out, func(a, b int) bool { return out[a]["member_id"].(string) < out[b]["member_id"].(string) })
			writeJSON(w, http.StatusOK, obj{"members": out, "schema": "/v2/schemas/members"})
		case http.MethodPost:
			if !owner {
				fail(w, svc, http.StatusForbidden, "", "You are not permitted to create image members for the image.")
				return
			}
			if img.Visibility != "shared" {
				fail(w, svc, http.StatusForbidden, "", "Image "+img.ID+" is not a shared image; only shared images can have members.")
				return
			}
			var b struct {
				Member string `json:"member"`
			}
			if err := decodeBody(r, &b); err != nil || b.Member == "" {
				fail(w, svc, http.StatusBadRequest, "", "Member to be added not specified")
				return
			}
			if img.Members[b.Member] != nil {
				fail(w, svc, http.StatusConflict, "", "Member "+b.Member+" already exists")
				return
			}
			now := time.Now()
			m := &member{ID: b.Member, Status: "pending", Created: now, Updated: now}
			img.Members[m.ID] = m
			writeJSON(w, http.StatusOK, gl.memberJSON(img, m))
		default:
			methodNotAllowed(w, svc)
		}
		return
	}
	m := img.Members[rest[0]]
	if m == nil || len(rest) != 1 || (!owner && m.ID != t.project.ID) {
		fail(w, svc, http.StatusNotFound, "", "Member "+rest[0]+" not found")
		return
	}
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, gl.memberJSON(img, m))
	case http.MethodPut:
		var b struct {
			Status string `json:"status"`
		}
		if err := decodeBody(r, &b); err != nil {
			fail(w, svc, http.StatusBadRequest, "", err.Error())
			return
		}
		// Only the member project (or an admin) decides on a membership:
		// the owner sharing an image cannot accept it for the consumer.
		if m.ID != t.project.ID && !t.isAdmin() {
			fail(w, svc, http.StatusForbidden, "", "You are not permitted to modify 'status' on this image member: only project "+m.ID+" may accept or reject image "+img.ID+".")
			return
		}
		switch b.Status {
		case "pending", "accepted", "rejected":
		default:
			fail(w, svc, http.StatusBadRequest, "", "Invalid status: "+b.Status)
			return
		}
		m.Status, m.Updated = b.Status, time.Now()
		writeJSON(w, http.StatusOK, gl.memberJSON(img, m))
	case http.MethodDelete:
		if !owner {
			fail(w, svc, http.StatusForbidden, "", "You are not permitted to delete image members.")
			return
		}
		delete(img.Members, m.ID)
		w.WriteHeader(http.StatusNoContent)
	default:
		methodNotAllowed(w, svc)
	}
}

type ingested struct {
	disk           string
	file           string // stored upload (keepsUploads)
	data           []byte // when the hypervisor cannot import disks
	size           int64
	md5, sha512hex string
}

// ingest reads image data (without gl.mu), importing it as a disk when the
// hypervisor is a DiskImporter, else keeping it in memory.
func (gl *glance) ingest(r io.Reader, format string) (*ingested, error) {
	m, h := md5.New(), sha512.New()
	cr := &countingReader{r: io.TeeReader(r, io.MultiWriter(m, h))}
	ing := &ingested{}
	var err error
	if imp, ok := gl.c.o.Hypervisor.(DiskImporter); ok {
		ing.disk, err = imp.ImportDisk(cr, format)
		_, _ = io.Copy(io.Discard, cr) // drain what the importer left, for the checksum
	} else if gl.keepsUploads() {
		ing.file, err = gl.uploadFile(cr)
	} else {
		ing.data, err = io.ReadAll(cr)
	}
	if err != nil {
		return nil, err
	}
	ing.size = cr.n
	ing.md5, ing.sha512hex = hex.EncodeToString(m.Sum(nil)), hex.EncodeToString(h.Sum(nil))
	return ing, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// finishIngest makes img active with ing (or killed); gl.mu held.
func (gl *glance) finishIngest(img *image, ing *ingested, err error) *httpErr {
	drop := func() {
		if ing != nil && ing.disk != "" {
			d := ing.disk
			gl.c.goAfter(0, func() { gl.c.deleteDisk(d) })
		}
		if ing != nil && ing.file != "" {
			os.Remove(ing.file)
		}
	}
	if gl.images[img.ID] != img {
		drop()
		return &httpErr{http.StatusGone, "Image " + img.ID + " could not be found after upload."}
	}
	img.Updated = time.Now()
	if err != nil {
		img.Status = "queued"
		return &httpErr{http.StatusBadRequest, err.Error()}
	}
	if gl.c.takeFault(FaultImageKilled, img.Name) != nil {
		drop()
		img.Status = "killed"
		return &httpErr{http.StatusInternalServerError, "Error in store configuration. Adding images to store is disabled."}
	}
	switch {
	case ing.disk != "":
		img.Disk = ing.disk
	case ing.file != "":
		img.file = ing.file
	default:
		img.Data, img.hasData = ing.data, true
	}
	img.Size, img.Checksum, img.HashValue = ing.size, ing.md5, ing.sha512hex
	img.Status = "active"
	gl.c.states.note("image", img.ID, "active")
	return nil
}

// Glance's image schema enumerates the formats (its default
// [image_format] lists); anything else fails schema validation, on
// create and on update, before any state check. Seen on Debian's Glance
// 25 by the real-cloud tier's contract test.
var imageFormats = map[string][]string{
	"disk_format":      {"ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso", "ploop"},
	"container_format": {"ami", "ari", "aki", "bare", "ovf", "ova", "docker", "compressed"},
}

func checkFormat(field, value string) *httpErr {
	allowed := imageFormats[field]
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	quoted := make([]string, 0, len(allowed)+1)
	quoted = append(quoted, "None")
	for _, a := range allowed {
		quoted = append(quoted, "'"+a+"'")
	}
	return &httpErr{http.StatusBadRequest, fmt.Sprintf("Provided object does not match schema 'image': '%s' is not one of [%s]", value, strings.Join(quoted, ", "))}
}
