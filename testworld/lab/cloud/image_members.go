package cloud

import (
	"net/http"
	"sort"
	"time"
)

// memberRoutes serves an image's members below p
// (/image/v2/images/{id}/members); an unknown method answers 405.
func (gl *glance) memberRoutes(rt *router, p string) {
	rt.handle("GET "+p, gl.oneImage(gl.listMembers))
	rt.handle("POST "+p, gl.oneImage(gl.addMember))
	rt.handle(p, gl.oneImage(func(w http.ResponseWriter, _ *http.Request, _ *caller, _ *image, _ bool) {
		methodNotAllowed(w, SvcImage)
	}))
	rt.handle("GET "+p+"/{member}", gl.oneImage(gl.oneMember(func(w http.ResponseWriter, _ *http.Request, _ *caller, img *image, m *member) {
		writeJSON(w, http.StatusOK, gl.memberJSON(img, m))
	})))
	rt.handle("PUT "+p+"/{member}", gl.oneImage(gl.oneMember(gl.setMemberStatus)))
	rt.handle("DELETE "+p+"/{member}", gl.oneImage(gl.oneMember(gl.deleteMember)))
	rt.handle(p+"/{member}", gl.oneImage(gl.oneMember(func(w http.ResponseWriter, _ *http.Request, _ *caller, _ *image, _ *member) {
		methodNotAllowed(w, SvcImage)
	})))
	rt.handle(p+"/{member}/{rest...}", gl.oneImage(func(w http.ResponseWriter, r *http.Request, _ *caller, _ *image, _ bool) {
		fail(w, SvcImage, http.StatusNotFound, "", "Member "+r.PathValue("member")+" not found")
	}))
}

func (gl *glance) listMembers(w http.ResponseWriter, _ *http.Request, c *caller, img *image, owner bool) {
	out := []obj{}
	for _, m := range img.Members {
		if owner || m.ID == c.t.project.ID {
			out = append(out, gl.memberJSON(img, m))
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a]["member_id"].(string) < out[b]["member_id"].(string) })
	writeJSON(w, http.StatusOK, obj{"members": out, "schema": "/v2/schemas/members"})
}

func (gl *glance) addMember(w http.ResponseWriter, r *http.Request, _ *caller, img *image, owner bool) {
	const svc = SvcImage
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
}

// memberFunc serves one member of an image, with gl.mu held.
type memberFunc func(w http.ResponseWriter, r *http.Request, c *caller, img *image, m *member)

// oneMember looks up the path's member: the owner sees every member, a
// member project only itself.
func (gl *glance) oneMember(h memberFunc) imageFunc {
	return func(w http.ResponseWriter, r *http.Request, c *caller, img *image, owner bool) {
		id := r.PathValue("member")
		m := img.Members[id]
		if m == nil || (!owner && m.ID != c.t.project.ID) {
			fail(w, SvcImage, http.StatusNotFound, "", "Member "+id+" not found")
			return
		}
		h(w, r, c, img, m)
	}
}

func (gl *glance) setMemberStatus(w http.ResponseWriter, r *http.Request, c *caller, img *image, m *member) {
	const svc = SvcImage
	var b struct {
		Status string `json:"status"`
	}
	if err := decodeBody(r, &b); err != nil {
		fail(w, svc, http.StatusBadRequest, "", err.Error())
		return
	}
	// Only the member project (or an admin) decides on a membership:
	// the owner sharing an image cannot accept it for the consumer.
	if m.ID != c.t.project.ID && !c.t.isAdmin() {
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
}

func (gl *glance) deleteMember(w http.ResponseWriter, _ *http.Request, c *caller, img *image, m *member) {
	if img.Owner != c.t.project.ID && !c.t.isAdmin() {
		fail(w, SvcImage, http.StatusForbidden, "", "You are not permitted to delete image members.")
		return
	}
	delete(img.Members, m.ID)
	w.WriteHeader(http.StatusNoContent)
}
