package cloud

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// routes is Glance v2 below authentication. A method Glance does not take
// on a path it knows answers 404, as the double always did; a path below
// an image is looked up first, so an unknown image answers "No image
// found" whatever follows.
func (gl *glance) routes() *router {
	rt := newRouter()
	const p = "/image/v2"
	rt.handle(p+"/schemas", gl.schema)
	rt.handle(p+"/schemas/{name...}", gl.schema)
	rt.handle(p+"/info/import", func(w http.ResponseWriter, _ *http.Request, _ *caller) {
		writeJSON(w, http.StatusOK, obj{"import-methods": obj{"description": "Import methods available.", "type": "array", "value": []string{"glance-direct", "web-download"}}})
	})
	rt.handle(p+"/info/stores", func(w http.ResponseWriter, _ *http.Request, _ *caller) {
		writeJSON(w, http.StatusOK, obj{"stores": []obj{{"id": "file", "default": true, "description": "lab"}}})
	})
	rt.handle("GET "+p+"/images", func(w http.ResponseWriter, r *http.Request, c *caller) { gl.listImages(w, r, c.t) })
	rt.handle("POST "+p+"/images", func(w http.ResponseWriter, r *http.Request, c *caller) { gl.createImage(w, r, c.t) })
	rt.handle("GET "+p+"/images/{id}", gl.oneImage(func(w http.ResponseWriter, _ *http.Request, _ *caller, img *image, _ bool) {
		writeJSON(w, http.StatusOK, gl.imageJSON(img))
	}))
	rt.handle("DELETE "+p+"/images/{id}", gl.oneImage(gl.ownImage(gl.deleteImage)))
	rt.handle("PATCH "+p+"/images/{id}", gl.oneImage(gl.patchImage))
	rt.handle("PUT "+p+"/images/{id}/tags/{tag}", gl.oneImage(gl.ownImage(gl.putTag)))
	rt.handle("DELETE "+p+"/images/{id}/tags/{tag}", gl.oneImage(gl.ownImage(gl.deleteTag)))
	rt.handle("PUT "+p+"/images/{id}/file", gl.oneImage(gl.ownImage(gl.putFile)))
	rt.handle("PUT "+p+"/images/{id}/stage", gl.oneImage(gl.ownImage(gl.stageFile)))
	rt.handle("POST "+p+"/images/{id}/import", gl.oneImage(gl.ownImage(gl.importImage)))
	rt.handle("GET "+p+"/images/{id}/file", gl.oneImage(gl.downloadFile))
	gl.memberRoutes(rt, p+"/images/{id}/members")
	notFound := func(w http.ResponseWriter, r *http.Request, _ *caller) { notFoundPath(w, r, SvcImage) }
	rt.handle(p+"/images", notFound)
	rt.handle(p+"/images/{id}", gl.oneImage(func(w http.ResponseWriter, r *http.Request, _ *caller, _ *image, _ bool) {
		notFoundPath(w, r, SvcImage)
	}))
	rt.handle(p+"/images/{id}/{rest...}", gl.oneImage(func(w http.ResponseWriter, r *http.Request, _ *caller, _ *image, _ bool) {
		notFoundPath(w, r, SvcImage)
	}))
	rt.handle("/", notFound)
	return rt
}

func (gl *glance) schema(w http.ResponseWriter, r *http.Request, _ *caller) {
	writeJSON(w, http.StatusOK, obj{"name": r.PathValue("name"), "properties": obj{}, "additionalProperties": obj{"type": "string"}})
}

// imageFunc serves one image, with gl.mu held (it may release it for a
// while, and takes it again before returning); owner says the caller may
// modify it.
type imageFunc func(w http.ResponseWriter, r *http.Request, c *caller, img *image, owner bool)

// oneImage looks up the path's image as the caller may see it.
func (gl *glance) oneImage(h imageFunc) routeFunc {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		id := r.PathValue("id")
		gl.mu.Lock()
		defer gl.mu.Unlock()
		img := gl.images[id]
		if img == nil || (!visibleTo(img, c.t.project.ID, "all") && !c.t.isAdmin()) {
			fail(w, SvcImage, http.StatusNotFound, "", "No image found with ID "+id)
			return
		}
		// Admins may modify any image, as Glance's default policy allows.
		h(w, r, c, img, img.Owner == c.t.project.ID || c.t.isAdmin())
	}
}

// ownImage refuses a caller who may not modify the image.
func (gl *glance) ownImage(h imageFunc) imageFunc {
	return func(w http.ResponseWriter, r *http.Request, c *caller, img *image, owner bool) {
		if !owner {
			imageForbidden(w, img)
			return
		}
		h(w, r, c, img, owner)
	}
}

func imageForbidden(w http.ResponseWriter, img *image) {
	fail(w, SvcImage, http.StatusForbidden, "", "You are not permitted to modify image "+img.ID+".")
}

func (gl *glance) deleteImage(w http.ResponseWriter, _ *http.Request, _ *caller, img *image, _ bool) {
	if img.Protected {
		fail(w, SvcImage, http.StatusForbidden, "", "Image "+img.ID+" is protected and cannot be deleted.")
		return
	}
	delete(gl.images, img.ID)
	if img.file != "" {
		os.Remove(img.file)
	}
	if img.Disk != "" {
		gl.mu.Unlock()
		gl.c.deleteDisk(img.Disk)
		gl.mu.Lock()
	}
	w.WriteHeader(http.StatusNoContent)
}

// patchOp is one JSON-patch operation of PATCH /v2/images/{id}.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

func (gl *glance) patchImage(w http.ResponseWriter, r *http.Request, c *caller, img *image, owner bool) {
	ct := r.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "application/openstack-images-v2.1-json-patch") && !strings.HasPrefix(ct, "application/openstack-images-v2.0-json-patch") {
		fail(w, SvcImage, http.StatusUnsupportedMediaType, "", "Unsupported Content-Type")
		return
	}
	if !owner {
		imageForbidden(w, img)
		return
	}
	var ops []patchOp
	if err := decodeBody(r, &ops); err != nil {
		fail(w, SvcImage, http.StatusBadRequest, "", err.Error())
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
		if e := applyPatch(&cp, op, c.t.isAdmin()); e != nil {
			fail(w, SvcImage, e.status, "", e.msg)
			return
		}
	}
	cp.Updated = time.Now()
	*img = cp
	writeJSON(w, http.StatusOK, gl.imageJSON(img))
}

// applyPatch applies one operation to img, Glance's way.
func applyPatch(img *image, op patchOp, admin bool) *httpErr {
	key := strings.TrimPrefix(op.Path, "/")
	key = strings.ReplaceAll(strings.ReplaceAll(key, "~1", "/"), "~0", "~")
	if key == "" || strings.Contains(key, "/") {
		return &httpErr{http.StatusBadRequest, "Invalid JSON pointer for this resource: '" + op.Path + "'"}
	}
	_, isProp := img.Props[key]
	core := imageCoreKeys[key]
	switch op.Op {
	case "add", "replace":
		if op.Op == "replace" && !core && !isProp {
			return &httpErr{http.StatusConflict, "Property " + key + " does not exist."}
		}
		return setImageField(img, key, op.Value, false, admin)
	case "remove":
		if core {
			return &httpErr{http.StatusForbidden, "Attribute '" + key + "' is read-only."}
		}
		if !isProp {
			return &httpErr{http.StatusConflict, "Property " + key + " does not exist."}
		}
		delete(img.Props, key)
		return nil
	default:
		return &httpErr{http.StatusBadRequest, "Unable to find '" + op.Op + "' operation"}
	}
}

func (gl *glance) putTag(w http.ResponseWriter, r *http.Request, _ *caller, img *image, _ bool) {
	if tag := r.PathValue("tag"); !contains(img.Tags, tag) {
		img.Tags = append(img.Tags, tag)
	}
	img.Updated = time.Now()
	w.WriteHeader(http.StatusNoContent)
}

func (gl *glance) deleteTag(w http.ResponseWriter, r *http.Request, _ *caller, img *image, _ bool) {
	tag := r.PathValue("tag")
	if !contains(img.Tags, tag) {
		fail(w, SvcImage, http.StatusNotFound, "", "Tag "+tag+" not found.")
		return
	}
	img.Tags = removeStr(img.Tags, tag)
	img.Updated = time.Now()
	w.WriteHeader(http.StatusNoContent)
}

// queued refuses an upload to an image that is past "queued".
func queued(w http.ResponseWriter, img *image) bool {
	if img.Status != "queued" {
		fail(w, SvcImage, http.StatusConflict, "", "Image status transition from "+img.Status+" to saving is not allowed")
		return false
	}
	return true
}

func (gl *glance) stageFile(w http.ResponseWriter, r *http.Request, _ *caller, img *image, _ bool) {
	if !queued(w, img) {
		return
	}
	img.Status = "uploading"
	gl.mu.Unlock()
	data, err := io.ReadAll(r.Body)
	gl.mu.Lock()
	if gl.images[img.ID] != img {
		fail(w, SvcImage, http.StatusGone, "", "Image "+img.ID+" could not be found after upload.")
		return
	}
	if err != nil {
		img.Status = "queued"
		fail(w, SvcImage, http.StatusBadRequest, "", err.Error())
		return
	}
	img.staged = data
	w.WriteHeader(http.StatusNoContent)
}

func (gl *glance) putFile(w http.ResponseWriter, r *http.Request, _ *caller, img *image, _ bool) {
	if !queued(w, img) {
		return
	}
	img.Status = "saving"
	gl.mu.Unlock()
	ing, err := gl.ingest(r.Body, img.DiskFormat)
	gl.mu.Lock()
	if err := gl.finishIngest(img, ing, err); err != nil {
		fail(w, SvcImage, err.status, "", err.msg)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (gl *glance) importImage(w http.ResponseWriter, r *http.Request, _ *caller, img *image, _ bool) {
	var b struct {
		Method struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"method"`
	}
	if err := decodeBody(r, &b); err != nil {
		fail(w, SvcImage, http.StatusBadRequest, "", err.Error())
		return
	}
	src, e := importSource(img, b.Method.Name, b.Method.URI)
	if e != nil {
		fail(w, SvcImage, e.status, "", e.msg)
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
}

// importSource is where an import method reads the image's data.
func importSource(img *image, method, uri string) (func() (io.ReadCloser, error), *httpErr) {
	switch method {
	case "web-download":
		if img.Status != "queued" {
			return nil, &httpErr{http.StatusConflict, "Image needs to be in 'queued' state to use 'web-download' method"}
		}
		return func() (io.ReadCloser, error) {
			resp, err := http.Get(uri)
			if err != nil {
				return nil, err
			}
			if resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				return nil, fmt.Errorf("GET %s: %s", uri, resp.Status)
			}
			return resp.Body, nil
		}, nil
	case "glance-direct":
		if img.Status != "uploading" || img.staged == nil {
			return nil, &httpErr{http.StatusConflict, "Image needs to be staged before 'glance-direct' method can be used"}
		}
		data := img.staged
		img.staged = nil
		return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, nil
	default:
		return nil, &httpErr{http.StatusBadRequest, "Import method " + method + " is not supported"}
	}
}

func (gl *glance) downloadFile(w http.ResponseWriter, _ *http.Request, _ *caller, img *image, _ bool) {
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
}
