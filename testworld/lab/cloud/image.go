package cloud

import (
	"crypto/md5"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
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

	rt *router // the v2 API below authentication

	mu     sync.Mutex
	images map[string]*image
}

func newGlance(c *Cloud) *glance {
	gl := &glance{c: c, images: map[string]*image{}}
	gl.rt = gl.routes()
	return gl
}

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
	gl.rt.serve(w, r, cleanPath(append([]string{"image", "v2"}, segs...)), &caller{t: t})
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
		return setVisibility(img, v, admin)
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
		return setFormat(img, k, v, create)
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

func setVisibility(img *image, v any, admin bool) *httpErr {
	s, _ := v.(string)
	switch s {
	case "public", "private", "shared", "community":
		if s == "public" && img.Visibility != "public" && !admin {
			return &httpErr{http.StatusForbidden, "You are not authorized to complete publicize_image action."}
		}
		img.Visibility = s
		return nil
	default:
		return badRequest("Invalid visibility value: " + s)
	}
}

// setFormat sets disk_format or container_format (k), which only a
// queued image may change after its creation.
func setFormat(img *image, k string, v any, create bool) *httpErr {
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

func (gl *glance) memberJSON(i *image, m *member) obj {
	return obj{"image_id": i.ID, "member_id": m.ID, "status": m.Status, "created_at": tsZ(m.Created),
		"updated_at": tsZ(m.Updated), "schema": "/v2/schemas/member"}
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
