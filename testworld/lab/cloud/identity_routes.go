package cloud

import (
	"net/http"
	"time"
)

// routes is Keystone v3 below authentication (POST /v3/auth/tokens comes
// before it). Keystone's read-only resources answer any method.
func (ks *keystone) routes() *router {
	rt := newRouter()
	const p = "/identity/v3"
	rt.handle(p+"/auth/tokens", ks.serveSubjectToken)
	rt.handle(p+"/auth/projects", ks.listProjects)
	rt.handle(p+"/projects", ks.listProjects)
	rt.handle(p+"/auth/catalog", func(w http.ResponseWriter, r *http.Request, c *caller) {
		writeJSON(w, http.StatusOK, obj{"catalog": ks.catalog(c.t.project),
			"links": obj{"self": ks.c.url + reqPath(r), "previous": nil, "next": nil}})
	})
	rt.handle(p+"/projects/{id}", func(w http.ResponseWriter, r *http.Request, c *caller) {
		id := r.PathValue("id")
		p := ks.projects[id]
		if p == nil || (p != c.t.project && !c.t.isAdmin()) {
			fail(w, SvcIdentity, http.StatusNotFound, "", "Could not find project: "+id+".")
			return
		}
		writeJSON(w, http.StatusOK, obj{"project": ks.projectJSON(p)})
	})
	rt.handle(p+"/users/{id}", ks.ownUser(func(w http.ResponseWriter, r *http.Request, t *token) {
		writeJSON(w, http.StatusOK, obj{"user": obj{"id": t.user.ID, "name": t.user.Name, "domain_id": domainID(t.user.Domain),
			"enabled": true, "default_project_id": t.user.project.ID, "password_expires_at": nil,
			"links": obj{"self": ks.c.url + reqPath(r)}}})
	}))
	rt.handle(p+"/users/{id}/application_credentials", ks.ownUser(func(w http.ResponseWriter, r *http.Request, t *token) {
		acs := []obj{}
		for _, ac := range t.user.AppCredentials {
			acs = append(acs, obj{"id": ac.ID, "name": ac.Name, "project_id": t.user.project.ID,
				"description": "", "expires_at": nil, "unrestricted": false, "roles": roles(t.user.Roles), "access_rules": []obj{}})
		}
		writeJSON(w, http.StatusOK, obj{"application_credentials": acs,
			"links": obj{"self": ks.c.url + reqPath(r), "previous": nil, "next": nil}})
	}))
	rt.handle(p+"/domains", func(w http.ResponseWriter, _ *http.Request, c *caller) {
		writeJSON(w, http.StatusOK, obj{"domains": []obj{{"id": domainID(c.t.user.Domain), "name": c.t.user.Domain, "enabled": true, "description": ""}}})
	})
	rt.handle(p+"/regions", func(w http.ResponseWriter, _ *http.Request, _ *caller) {
		writeJSON(w, http.StatusOK, obj{"regions": []obj{{"id": ks.c.o.Region, "description": "", "parent_region_id": nil}}})
	})
	rt.handle("/", func(w http.ResponseWriter, r *http.Request, _ *caller) { notFoundPath(w, r, SvcIdentity) })
	return rt
}

// serveSubjectToken validates (GET, HEAD) or revokes (DELETE) the token
// in X-Subject-Token.
func (ks *keystone) serveSubjectToken(w http.ResponseWriter, r *http.Request, _ *caller) {
	subj := r.Header.Get("X-Subject-Token")
	ks.mu.Lock()
	st := ks.tokens[subj]
	if st != nil && time.Now().After(st.Expires) {
		st = nil
	}
	if st != nil && r.Method == http.MethodDelete {
		delete(ks.tokens, subj)
	}
	ks.mu.Unlock()
	if st == nil {
		fail(w, SvcIdentity, http.StatusNotFound, "", "Could not find token: "+subj+".")
		return
	}
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("X-Subject-Token", st.ID)
		writeJSON(w, http.StatusOK, obj{"token": ks.tokenBody(st)})
	case http.MethodHead:
		w.WriteHeader(http.StatusOK)
	case http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	default:
		methodNotAllowed(w, SvcIdentity)
	}
}

// listProjects: listing every project is identity:list_projects, an
// admin rule; a user lists its own through /v3/auth/projects.
func (ks *keystone) listProjects(w http.ResponseWriter, r *http.Request, c *caller) {
	t := c.t
	ps := append([]*project{t.user.project}, t.user.others...)
	if r.URL.Path == "/identity/v3/projects" {
		if !t.isAdmin() {
			fail(w, SvcIdentity, http.StatusForbidden, "", "You are not authorized to perform the requested action: identity:list_projects.")
			return
		}
		ps = sortByCreated(ks.projects, func(*project) time.Time { return time.Time{} }, func(p *project) string { return p.Name })
	}
	out := []obj{}
	for _, p := range ps {
		out = append(out, ks.projectJSON(p))
	}
	writeJSON(w, http.StatusOK, obj{"projects": out,
		"links": obj{"self": ks.c.url + reqPath(r), "previous": nil, "next": nil}})
}

// ownUser serves the caller's own user only.
func (ks *keystone) ownUser(h func(w http.ResponseWriter, r *http.Request, t *token)) routeFunc {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		if id := r.PathValue("id"); id != c.t.user.ID {
			fail(w, SvcIdentity, http.StatusNotFound, "", "Could not find user: "+id+".")
			return
		}
		h(w, r, c.t)
	}
}
