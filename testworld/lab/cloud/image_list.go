package cloud

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// listImages is GET /v2/images: Glance's filters, sort keys and marker
// paging.
func (gl *glance) listImages(w http.ResponseWriter, r *http.Request, t *token) {
	const svc = SvcImage
	q := r.URL.Query()
	specs, e := imageSortSpecs(q)
	if e != nil {
		fail(w, svc, e.status, "", e.msg)
		return
	}
	limit := queryInt(r, "limit", 25)
	if limit < 0 {
		fail(w, svc, http.StatusBadRequest, "", "limit param must be positive")
		return
	}
	if limit > 1000 {
		limit = 1000
	}
	gl.mu.Lock()
	defer gl.mu.Unlock()
	var sel []*image
	for _, i := range gl.images {
		if imageSelected(i, q, t) {
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
		var ok bool
		if sel, ok = afterMarker(sel, m, func(i *image) string { return i.ID }); !ok {
			fail(w, svc, http.StatusBadRequest, "", "marker "+m+" could not be found.")
			return
		}
	}
	writeJSON(w, http.StatusOK, gl.imagePage(sel, q, limit))
}

// imagePage is one page of sel, with the next page's link.
func (gl *glance) imagePage(sel []*image, q url.Values, limit int) obj {
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
	return resp
}

// imageSortSpecs reads sort=key:dir,... or sort_key/sort_dir, checked,
// with id as the last key.
func imageSortSpecs(q url.Values) ([]sortSpec, *httpErr) {
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
			return nil, badRequest("Invalid sort key: " + sp.key)
		}
		if sp.dir != "asc" && sp.dir != "desc" {
			return nil, badRequest("Invalid sort direction: " + sp.dir)
		}
	}
	return append(specs, sortSpec{"id", specs[len(specs)-1].dir}), nil
}

// imageSelected says whether i is visible to t and passes q's filters.
func imageSelected(i *image, q url.Values, t *token) bool {
	if !visibleTo(i, t.project.ID, q.Get("member_status")) || !listed(i.listable) {
		return false
	}
	if i.Hidden && q.Get("os_hidden") != "true" {
		return false
	}
	if vis := q.Get("visibility"); vis != "" && vis != "all" && i.Visibility != vis {
		return false
	}
	have := map[string]string{"name": i.Name, "status": i.Status, "owner": i.Owner, "disk_format": i.DiskFormat,
		"container_format": i.ContainerFormat, "id": i.ID}
	for f, h := range have {
		v := q.Get(f)
		if v == "" {
			continue
		}
		if in, ok := strings.CutPrefix(v, "in:"); ok {
			if !contains(strings.Split(in, ","), h) {
				return false
			}
		} else if v != h {
			return false
		}
	}
	for _, tag := range q["tag"] {
		if !contains(i.Tags, tag) {
			return false
		}
	}
	if v := q.Get("protected"); v != "" && v != strconv.FormatBool(i.Protected) {
		return false
	}
	// extra property filters (e.g. ?os_distro=rocky)
	for k, vals := range q {
		if imageListParams[k] || len(vals) == 0 {
			continue
		}
		if pv, has := i.Props[k]; !has || fmt.Sprint(pv) != vals[0] {
			return false
		}
	}
	return true
}
