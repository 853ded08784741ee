package cloud

import (
	"encoding/json"
	"net/http"
	"time"
)

// setImageMetadata answers POST /volumes/{id}/action with
// {"os-set_image_metadata": {"metadata": {...}}} as Cinder does: the keys
// are merged into the volume's image metadata (what an upload copies into
// the new image's properties), 200 with the whole resulting metadata. Like
// Cinder it refuses a body without a metadata object, keys of 1-255 and
// values over 255 characters, and a volume that is uploading or in
// maintenance. cn.mu held.
func (cn *cinder) setImageMetadata(w http.ResponseWriter, v *volume, arg json.RawMessage) {
	const svc = SvcVolume
	var a struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal(arg, &a); err != nil || a.Metadata == nil {
		fail(w, svc, http.StatusBadRequest, "", "Invalid input for field/attribute os-set_image_metadata. Value: "+string(arg)+". 'metadata' is a required property")
		return
	}
	meta := map[string]string{}
	for k, raw := range a.Metadata {
		val, ok := raw.(string)
		if !ok {
			fail(w, svc, http.StatusBadRequest, "", "Invalid input for field/attribute "+k+". Value: "+jsonText(raw)+". is not of type 'string'")
			return
		}
		if len(k) < 1 || len(k) > 255 || len(val) > 255 {
			fail(w, svc, http.StatusBadRequest, "", "Invalid input for field/attribute metadata. Key or value of "+k+" is not between 1 and 255 (key) or 0 and 255 (value) characters")
			return
		}
		meta[k] = val
	}
	if v.Status == "uploading" || v.Status == "maintenance" {
		fail(w, svc, http.StatusBadRequest, "", "Invalid volume: Updating volume metadata is not allowed for volumes in "+v.Status+" status.")
		return
	}
	if v.imageMeta == nil {
		v.imageMeta = map[string]string{}
	}
	for k, val := range meta {
		v.imageMeta[k] = val
	}
	v.Updated = time.Now()
	out := map[string]string{}
	for k, val := range v.imageMeta {
		out[k] = val
	}
	writeJSON(w, http.StatusOK, obj{"metadata": out})
}

// unsetImageMetadata answers {"os-unset_image_metadata": {"key": K}} as
// Cinder does: 200 and K removed, 404 when the volume has no such key, 400
// without a key. cn.mu held.
func (cn *cinder) unsetImageMetadata(w http.ResponseWriter, v *volume, arg json.RawMessage) {
	const svc = SvcVolume
	var a struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(arg, &a); err != nil || a.Key == "" {
		fail(w, svc, http.StatusBadRequest, "", "Invalid input for field/attribute os-unset_image_metadata. Value: "+string(arg)+". 'key' is a required property")
		return
	}
	if _, ok := v.imageMeta[a.Key]; !ok {
		fail(w, svc, http.StatusNotFound, "", "Glance metadata for volume/snapshot "+v.ID+" cannot be found.")
		return
	}
	delete(v.imageMeta, a.Key)
	v.Updated = time.Now()
	w.WriteHeader(http.StatusOK)
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
