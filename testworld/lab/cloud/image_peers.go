package cloud

import "time"

// What the image service offers compute and volume, which call these with
// their own lock held (both come before image in the lock order).

// imageCopy returns a copy of image id (properties and tags copied too),
// or nil.
func (gl *glance) imageCopy(id string) *image {
	gl.mu.Lock()
	defer gl.mu.Unlock()
	i := gl.images[id]
	if i == nil {
		return nil
	}
	cp := *i
	cp.Props = make(map[string]any, len(i.Props))
	for k, v := range i.Props {
		cp.Props[k] = v
	}
	cp.Tags = append([]string{}, i.Tags...)
	cp.Members = nil
	return &cp
}

// add registers a new image.
func (gl *glance) add(img *image) {
	gl.mu.Lock()
	defer gl.mu.Unlock()
	img.listable = gl.c.listableAt(img.Created)
	gl.images[img.ID] = img
}

// status lists images that are not active, for Cloud.Status.
func (gl *glance) status() []StatusItem {
	gl.mu.Lock()
	defer gl.mu.Unlock()
	out := []StatusItem{}
	for _, i := range gl.images {
		if i.Status != "active" {
			out = append(out, StatusItem{i.ID, i.Name, i.Status})
		}
	}
	return out
}

// finishEmpty makes a zero-byte image (a volume-backed server's snapshot)
// active, or killed when ok is false.
func (gl *glance) finishEmpty(img *image, ok bool) {
	gl.mu.Lock()
	defer gl.mu.Unlock()
	if gl.images[img.ID] != img {
		return
	}
	img.Updated = time.Now()
	if !ok {
		img.Status = "killed"
		return
	}
	img.Size, img.Checksum, img.HashValue = 0, "", ""
	img.Status = "active"
	gl.c.states.note("image", img.ID, "active")
}
