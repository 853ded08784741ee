package cloud

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// keystone is the identity service. Users and projects are fixed when the
// cloud is made, so only tokens need the lock.
type keystone struct {
	c        *Cloud
	rt       *router // the v3 API below authentication
	users    []*userRec
	projects map[string]*project // by id

	mu     sync.Mutex
	tokens map[string]*token
}

func newKeystone(c *Cloud, users []User) (*keystone, error) {
	ks := &keystone{c: c, projects: map[string]*project{}, tokens: map[string]*token{}}
	ks.rt = ks.routes()
	byName := map[string]*project{}
	for _, u := range users {
		if u.Name == "" {
			return nil, errors.New("cloud: user without name")
		}
		if u.Domain == "" {
			u.Domain = "Default"
		}
		if u.Project == "" {
			u.Project = u.Name
		}
		if len(u.Roles) == 0 {
			u.Roles = []string{"member", "reader"}
		}
		get := func(name string) *project {
			p := byName[u.Domain+"/"+name]
			if p == nil {
				p = &project{ID: newHexID(), Name: name, DomainID: domainID(u.Domain)}
				byName[u.Domain+"/"+name] = p
				ks.projects[p.ID] = p
			}
			return p
		}
		rec := &userRec{ID: newHexID(), User: u, project: get(u.Project)}
		for _, name := range u.OtherProjects {
			rec.others = append(rec.others, get(name))
		}
		ks.users = append(ks.users, rec)
	}
	return ks, nil
}

// projectIDs lists every project's id.
func (ks *keystone) projectIDs() []string {
	var out []string
	for id := range ks.projects {
		out = append(out, id)
	}
	return out
}

// projectID resolves a project name or id; "" when unknown.
func (ks *keystone) projectID(nameOrID string) string {
	for _, p := range ks.projects {
		if p.Name == nameOrID || p.ID == nameOrID {
			return p.ID
		}
	}
	return ""
}

// defaultProject is the first user's project.
func (ks *keystone) defaultProject() string { return ks.users[0].project.ID }

// validToken returns the unexpired token id, or nil (forgetting an expired one).
func (ks *keystone) validToken(id string) *token {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	t := ks.tokens[id]
	if t != nil && time.Now().After(t.Expires) {
		delete(ks.tokens, id)
		return nil
	}
	return t
}

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

func (ks *keystone) identityVersion() obj {
	return obj{
		"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
		"links":       []obj{{"rel": "self", "href": ks.c.url + "/identity/v3/"}},
		"media-types": []obj{{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}},
	}
}

func (ks *keystone) serve(w http.ResponseWriter, r *http.Request, segs []string) {
	const svc = SvcIdentity
	if len(segs) == 0 {
		writeJSON(w, http.StatusMultipleChoices, obj{"versions": obj{"values": []obj{ks.identityVersion()}}})
		return
	}
	if segs[0] != "v3" {
		notFoundPath(w, r, svc)
		return
	}
	segs = segs[1:]
	if len(segs) == 0 {
		writeJSON(w, http.StatusOK, obj{"version": ks.identityVersion()})
		return
	}
	if len(segs) == 2 && segs[0] == "auth" && segs[1] == "tokens" && r.Method == http.MethodPost {
		ks.issueToken(w, r)
		return
	}
	t := ks.c.authenticate(w, r)
	if t == nil {
		return
	}
	ks.rt.serve(w, r, cleanPath(append([]string{"identity", "v3"}, segs...)), &caller{t: t})
}

func (ks *keystone) projectJSON(p *project) obj {
	return obj{"id": p.ID, "name": p.Name, "domain_id": p.DomainID, "enabled": true, "is_domain": false,
		"parent_id": p.DomainID, "description": "", "tags": []string{}, "options": obj{},
		"links": obj{"self": ks.c.url + "/identity/v3/projects/" + p.ID}}
}

var roleIDs = map[string]string{"admin": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
	"member": "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2", "reader": "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"}

// roles is the token's role list. Keystone's implied roles apply: admin
// implies member, member implies reader.
func roles(names []string) []obj {
	has := map[string]bool{}
	for _, n := range names {
		has[n] = true
	}
	if has["admin"] {
		has["member"] = true
	}
	if has["member"] {
		has["reader"] = true
	}
	var out []obj
	for _, n := range []string{"admin", "member", "reader"} {
		if has[n] {
			out = append(out, obj{"id": roleIDs[n], "name": n})
		}
	}
	for _, n := range names {
		if roleIDs[n] == "" {
			out = append(out, obj{"id": newHexID(), "name": n})
		}
	}
	return out
}

// isAdmin says whether the token carries the admin role: what the
// services' default policies call "context_is_admin".
func (t *token) isAdmin() bool { return contains(t.user.Roles, "admin") }

// authIdentity is the identity part of POST /v3/auth/tokens.
type authIdentity struct {
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
}

type authReq struct {
	Auth struct {
		Identity authIdentity `json:"identity"`
		Scope    *struct {
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

func (ks *keystone) userMatches(u *userRec, id, name, domID, domName string) bool {
	if id != "" {
		return u.ID == id
	}
	return name != "" && u.Name == name && domainOK(u.Domain, domID, domName)
}

func (ks *keystone) issueToken(w http.ResponseWriter, r *http.Request) {
	const svc = SvcIdentity
	var req authReq
	if err := decodeBody(r, &req); err != nil {
		fail(w, svc, http.StatusBadRequest, "", err.Error())
		return
	}
	if len(req.Auth.Identity.Methods) == 0 {
		fail(w, svc, http.StatusBadRequest, "", "Expecting to find methods in identity.")
		return
	}
	ks.mu.Lock()
	t, e := ks.authenticateRequest(req)
	if e == nil {
		ks.tokens[t.ID] = t
	}
	ks.mu.Unlock()
	if e != nil {
		fail(w, svc, e.status, "", e.msg)
		return
	}
	w.Header().Set("X-Subject-Token", t.ID)
	writeJSON(w, http.StatusCreated, obj{"token": ks.tokenBody(t)})
}

// authenticateRequest checks the request's first method and scope and
// returns a new token; ks.mu held.
func (ks *keystone) authenticateRequest(req authReq) (*token, *httpErr) {
	unauth := &httpErr{http.StatusUnauthorized, "The request you have made requires authentication."}
	method := req.Auth.Identity.Methods[0]
	user, ac, e := ks.identify(req.Auth.Identity, method)
	if e != nil {
		return nil, e
	}
	if user == nil {
		return nil, unauth
	}
	proj := user.project
	if ac == nil && req.Auth.Scope != nil && req.Auth.Scope.Project != nil {
		// A user may scope to any project it has a role on.
		sp := req.Auth.Scope.Project
		proj = nil
		for _, p := range append([]*project{user.project}, user.others...) {
			if (sp.ID != "" && sp.ID == p.ID) || (sp.ID == "" && sp.Name == p.Name && domainOK(user.Domain, sp.Domain.ID, sp.Domain.Name)) {
				proj = p
			}
		}
		if proj == nil {
			return nil, unauth
		}
	}
	now := time.Now()
	return &token{ID: "gAAAAA" + newHexID() + newHexID(), user: user, project: proj, Issued: now,
		Expires: now.Add(ks.c.o.TokenTTL), Methods: []string{method}, appCred: ac, auditID: newHexID()[:22]}, nil
}

// identify finds the user (and application credential) an auth method
// names; a nil user means the credentials are wrong. ks.mu held.
func (ks *keystone) identify(id authIdentity, method string) (*userRec, *AppCredential, *httpErr) {
	var user *userRec
	var ac *AppCredential
	switch method {
	case "password":
		pu := id.Password.User
		for _, u := range ks.users {
			if ks.userMatches(u, pu.ID, pu.Name, pu.Domain.ID, pu.Domain.Name) && u.Password == pu.Password {
				user = u
			}
		}
	case "application_credential":
		a := id.AppCred
		for _, u := range ks.users {
			for i := range u.AppCredentials {
				cand := &u.AppCredentials[i]
				if cand.Secret != a.Secret {
					continue
				}
				if (a.ID != "" && cand.ID == a.ID) ||
					(a.ID == "" && a.Name != "" && cand.Name == a.Name && ks.userMatches(u, a.User.ID, a.User.Name, a.User.Domain.ID, a.User.Domain.Name)) {
					user, ac = u, cand
				}
			}
		}
	case "token":
		if t := ks.tokens[id.Token.ID]; t != nil && time.Now().Before(t.Expires) {
			if t.appCred != nil {
				// Keystone keeps an application credential's token to its
				// project: no re-scoping, no new tokens from it.
				return nil, nil, &httpErr{http.StatusForbidden, "You are not authorized to perform the requested action: Using method 'token' is not allowed for a token created with an application credential."}
			}
			user = t.user
		}
	default:
		return nil, nil, &httpErr{http.StatusUnauthorized, "Attempted to authenticate with an unsupported method."}
	}
	return user, ac, nil
}

func (ks *keystone) tokenBody(t *token) obj {
	dom := obj{"id": domainID(t.user.Domain), "name": t.user.Domain}
	b := obj{
		"methods":    t.Methods,
		"user":       obj{"domain": dom, "id": t.user.ID, "name": t.user.Name, "password_expires_at": nil},
		"audit_ids":  []string{t.auditID},
		"expires_at": tsMicroZ(t.Expires),
		"issued_at":  tsMicroZ(t.Issued),
		"project":    obj{"domain": dom, "id": t.project.ID, "name": t.project.Name},
		"is_domain":  false,
		"roles":      roles(t.user.Roles),
		"catalog":    ks.catalog(t.project),
	}
	if t.appCred != nil {
		b["application_credential"] = obj{"id": t.appCred.ID, "name": t.appCred.Name, "restricted": true}
	}
	return b
}

func (ks *keystone) catalog(p *project) []obj {
	entry := func(typ, name, url string) obj {
		var eps []obj
		for _, iface := range []string{"public", "internal", "admin"} {
			eps = append(eps, obj{"id": newHexID(), "interface": iface, "region": ks.c.o.Region, "region_id": ks.c.o.Region, "url": url})
		}
		return obj{"type": typ, "name": name, "id": newHexID(), "endpoints": eps}
	}
	return []obj{
		entry("identity", "keystone", ks.c.url+"/identity"),
		entry("compute", "nova", ks.c.url+"/compute/v2.1"),
		entry("image", "glance", ks.c.url+"/image"),
		entry("network", "neutron", ks.c.url+"/networking"),
		entry("block-storage", "cinder", ks.c.url+"/volume/v3/"+p.ID),
		entry("volumev3", "cinderv3", ks.c.url+"/volume/v3/"+p.ID),
	}
}
