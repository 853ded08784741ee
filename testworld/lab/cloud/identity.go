package cloud

import (
	"net/http"
	"strings"
	"time"
)

type token struct {
	ID      string
	user    *userRec
	project *project
	Issued  time.Time
	Expires time.Time
	Methods []string
	appCred *AppCredential
	auditID string
}

func (c *Cloud) identityVersion() obj {
	return obj{
		"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
		"links":       []obj{{"rel": "self", "href": c.url + "/identity/v3/"}},
		"media-types": []obj{{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}},
	}
}

func (c *Cloud) serveIdentity(w http.ResponseWriter, r *http.Request, segs []string) {
	const svc = SvcIdentity
	if len(segs) == 0 {
		writeJSON(w, http.StatusMultipleChoices, obj{"versions": obj{"values": []obj{c.identityVersion()}}})
		return
	}
	if segs[0] != "v3" {
		notFoundPath(w, r, svc)
		return
	}
	segs = segs[1:]
	if len(segs) == 0 {
		writeJSON(w, http.StatusOK, obj{"version": c.identityVersion()})
		return
	}
	if _, ok := match(segs, "auth/tokens"); ok && r.Method == http.MethodPost {
		c.issueToken(w, r)
		return
	}
	t := c.authenticate(w, r)
	if t == nil {
		return
	}
	switch {
	case eq(segs, "auth/tokens"):
		subj := r.Header.Get("X-Subject-Token")
		c.mu.Lock()
		st := c.tokens[subj]
		if st != nil && time.Now().After(st.Expires) {
			st = nil
		}
		if st != nil && r.Method == http.MethodDelete {
			delete(c.tokens, subj)
		}
		c.mu.Unlock()
		if st == nil {
			fail(w, svc, http.StatusNotFound, "", "Could not find token: "+subj+".")
			return
		}
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("X-Subject-Token", st.ID)
			writeJSON(w, http.StatusOK, obj{"token": c.tokenBody(st)})
		case http.MethodHead:
			w.WriteHeader(http.StatusOK)
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		default:
			methodNotAllowed(w, svc)
		}
	case eq(segs, "auth/projects"), eq(segs, "projects"):
		writeJSON(w, http.StatusOK, obj{"projects": []obj{c.projectJSON(t.project)},
			"links": obj{"self": c.url + r.URL.Path, "previous": nil, "next": nil}})
	case eq(segs, "auth/catalog"):
		writeJSON(w, http.StatusOK, obj{"catalog": c.catalog(t.project),
			"links": obj{"self": c.url + r.URL.Path, "previous": nil, "next": nil}})
	case len(segs) == 2 && segs[0] == "projects":
		p := c.projects[segs[1]]
		if p == nil || p != t.project {
			fail(w, svc, http.StatusNotFound, "", "Could not find project: "+segs[1]+".")
			return
		}
		writeJSON(w, http.StatusOK, obj{"project": c.projectJSON(p)})
	case len(segs) == 2 && segs[0] == "users":
		if segs[1] != t.user.ID {
			fail(w, svc, http.StatusNotFound, "", "Could not find user: "+segs[1]+".")
			return
		}
		writeJSON(w, http.StatusOK, obj{"user": obj{"id": t.user.ID, "name": t.user.Name, "domain_id": domainID(t.user.Domain),
			"enabled": true, "default_project_id": t.user.project.ID, "password_expires_at": nil,
			"links": obj{"self": c.url + r.URL.Path}}})
	case len(segs) == 3 && segs[0] == "users" && segs[2] == "application_credentials":
		if segs[1] != t.user.ID {
			fail(w, svc, http.StatusNotFound, "", "Could not find user: "+segs[1]+".")
			return
		}
		acs := []obj{}
		for _, ac := range t.user.AppCredentials {
			acs = append(acs, obj{"id": ac.ID, "name": ac.Name, "project_id": t.user.project.ID,
				"description": "", "expires_at": nil, "unrestricted": false, "roles": roles(), "access_rules": []obj{}})
		}
		writeJSON(w, http.StatusOK, obj{"application_credentials": acs,
			"links": obj{"self": c.url + r.URL.Path, "previous": nil, "next": nil}})
	case eq(segs, "domains"):
		writeJSON(w, http.StatusOK, obj{"domains": []obj{{"id": domainID(t.user.Domain), "name": t.user.Domain, "enabled": true, "description": ""}}})
	case eq(segs, "regions"):
		writeJSON(w, http.StatusOK, obj{"regions": []obj{{"id": c.o.Region, "description": "", "parent_region_id": nil}}})
	default:
		notFoundPath(w, r, svc)
	}
}

func eq(segs []string, p string) bool { _, ok := match(segs, p); return ok }

func (c *Cloud) projectJSON(p *project) obj {
	return obj{"id": p.ID, "name": p.Name, "domain_id": p.DomainID, "enabled": true, "is_domain": false,
		"parent_id": p.DomainID, "description": "", "tags": []string{}, "options": obj{},
		"links": obj{"self": c.url + "/identity/v3/projects/" + p.ID}}
}

func roles() []obj {
	return []obj{{"id": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1", "name": "admin"},
		{"id": "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2", "name": "member"},
		{"id": "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3", "name": "reader"}}
}

type authReq struct {
	Auth struct {
		Identity struct {
			Methods  []string `json:"methods"`
			Password struct {
				User struct {
					ID       string `json:"id"`
					Name     string `json:"name"`
					Password string `json:"password"`
					Domain   struct{ ID, Name string }
				} `json:"user"`
			} `json:"password"`
			AppCred struct {
				ID     string `json:"id"`
				Name   string `json:"name"`
				Secret string `json:"secret"`
				User   struct {
					ID     string `json:"id"`
					Name   string `json:"name"`
					Domain struct{ ID, Name string }
				} `json:"user"`
			} `json:"application_credential"`
			Token struct {
				ID string `json:"id"`
			} `json:"token"`
		} `json:"identity"`
		Scope *struct {
			Project *struct {
				ID     string `json:"id"`
				Name   string `json:"name"`
				Domain struct{ ID, Name string }
			} `json:"project"`
		} `json:"scope"`
	} `json:"auth"`
}

// domainID maps a domain name to its id ("Default" -> "default").
func domainID(name string) string {
	if name == "" || name == "Default" {
		return "default"
	}
	return strings.ToLower(name)
}

// domainOK says whether a request's domain (id or name) designates domain dom.
func domainOK(dom, id, name string) bool {
	return (id == "" && name == "") || id == domainID(dom) || name == dom
}

func (c *Cloud) userMatches(u *userRec, id, name, domID, domName string) bool {
	if id != "" {
		return u.ID == id
	}
	return name != "" && u.Name == name && domainOK(u.Domain, domID, domName)
}

func (c *Cloud) issueToken(w http.ResponseWriter, r *http.Request) {
	const svc = SvcIdentity
	var req authReq
	if err := decodeBody(r, &req); err != nil {
		fail(w, svc, http.StatusBadRequest, "", err.Error())
		return
	}
	id := req.Auth.Identity
	unauth := func() {
		fail(w, svc, http.StatusUnauthorized, "", "The request you have made requires authentication.")
	}
	if len(id.Methods) == 0 {
		fail(w, svc, http.StatusBadRequest, "", "Expecting to find methods in identity.")
		return
	}
	c.mu.Lock()
	var (
		user *userRec
		ac   *AppCredential
	)
	method := id.Methods[0]
	switch method {
	case "password":
		pu := id.Password.User
		for _, u := range c.users {
			if c.userMatches(u, pu.ID, pu.Name, pu.Domain.ID, pu.Domain.Name) && u.Password == pu.Password {
				user = u
			}
		}
	case "application_credential":
		a := id.AppCred
		for _, u := range c.users {
			for i := range u.AppCredentials {
				cand := &u.AppCredentials[i]
				if cand.Secret != a.Secret {
					continue
				}
				if (a.ID != "" && cand.ID == a.ID) ||
					(a.ID == "" && a.Name != "" && cand.Name == a.Name && c.userMatches(u, a.User.ID, a.User.Name, a.User.Domain.ID, a.User.Domain.Name)) {
					user, ac = u, cand
				}
			}
		}
	case "token":
		if t := c.tokens[id.Token.ID]; t != nil && time.Now().Before(t.Expires) {
			user = t.user
		}
	default:
		c.mu.Unlock()
		fail(w, svc, http.StatusUnauthorized, "", "Attempted to authenticate with an unsupported method.")
		return
	}
	if user == nil {
		c.mu.Unlock()
		unauth()
		return
	}
	proj := user.project
	if ac == nil && req.Auth.Scope != nil && req.Auth.Scope.Project != nil {
		sp := req.Auth.Scope.Project
		ok := (sp.ID != "" && sp.ID == proj.ID) || (sp.ID == "" && sp.Name == proj.Name && domainOK(user.Domain, sp.Domain.ID, sp.Domain.Name))
		if !ok {
			c.mu.Unlock()
			unauth()
			return
		}
	}
	now := time.Now()
	t := &token{ID: "gAAAAA" + newHexID() + newHexID(), user: user, project: proj, Issued: now,
		Expires: now.Add(c.o.TokenTTL), Methods: []string{method}, appCred: ac, auditID: newHexID()[:22]}
	c.tokens[t.ID] = t
	c.mu.Unlock()
	w.Header().Set("X-Subject-Token", t.ID)
	writeJSON(w, http.StatusCreated, obj{"token": c.tokenBody(t)})
}

func (c *Cloud) tokenBody(t *token) obj {
	dom := obj{"id": domainID(t.user.Domain), "name": t.user.Domain}
	b := obj{
		"methods":    t.Methods,
		"user":       obj{"domain": dom, "id": t.user.ID, "name": t.user.Name, "password_expires_at": nil},
		"audit_ids":  []string{t.auditID},
		"expires_at": tsMicroZ(t.Expires),
		"issued_at":  tsMicroZ(t.Issued),
		"project":    obj{"domain": dom, "id": t.project.ID, "name": t.project.Name},
		"is_domain":  false,
		"roles":      roles(),
		"catalog":    c.catalog(t.project),
	}
	if t.appCred != nil {
		b["application_credential"] = obj{"id": t.appCred.ID, "name": t.appCred.Name, "restricted": true}
	}
	return b
}

func (c *Cloud) catalog(p *project) []obj {
	entry := func(typ, name, url string) obj {
		var eps []obj
		for _, iface := range []string{"public", "internal", "admin"} {
			eps = append(eps, obj{"id": newHexID(), "interface": iface, "region": c.o.Region, "region_id": c.o.Region, "url": url})
		}
		return obj{"type": typ, "name": name, "id": newHexID(), "endpoints": eps}
	}
	return []obj{
		entry("identity", "keystone", c.url+"/identity"),
		entry("compute", "nova", c.url+"/compute/v2.1"),
		entry("image", "glance", c.url+"/image"),
		entry("network", "neutron", c.url+"/networking"),
		entry("block-storage", "cinder", c.url+"/volume/v3/"+p.ID),
		entry("volumev3", "cinderv3", c.url+"/volume/v3/"+p.ID),
	}
}
