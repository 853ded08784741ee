package cloud

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// keystone is the identity service. Projects are fixed when the cloud is
// made; users too, but for AddUser, so users and tokens need the lock.
type keystone struct {
	c        *Cloud
	rt       *router             // the v3 API below authentication
	projects map[string]*project // by id
	domains  map[string]string   // name by id

	mu     sync.Mutex
	users  []*userRec
	tokens map[string]*token
}

// AddUser adds a user of existing projects (in u.ProjectDomain, default
// "Default"), for tests that tell clients apart by user: the behaviour
// suite gives each packer run its own.
func (c *Cloud) AddUser(u User) error {
	ks := c.identity
	if u.Domain == "" {
		u.Domain = "Default"
	}
	if u.ProjectDomain == "" {
		u.ProjectDomain = u.Domain
	}
	if len(u.Roles) == 0 {
		u.Roles = []string{"member", "reader"}
	}
	find := func(name string) *project {
		for _, p := range ks.projects {
			if p.Name == name && p.DomainID == domainID(u.ProjectDomain) {
				return p
			}
		}
		return nil
	}
	rec := &userRec{ID: newHexID(), User: u, project: find(u.Project)}
	if rec.project == nil {
		return errors.New("cloud: AddUser: no project " + u.Project)
	}
	for _, name := range u.OtherProjects {
		p := find(name)
		if p == nil {
			return errors.New("cloud: AddUser: no project " + name)
		}
		rec.others = append(rec.others, p)
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	for _, o := range ks.users {
		if o.Name == u.Name && o.Domain == u.Domain {
			return errors.New("cloud: AddUser: user " + u.Name + " exists")
		}
	}
	ks.users = append(ks.users, rec)
	return nil
}

func newKeystone(c *Cloud, users []User) (*keystone, error) {
	ks := &keystone{c: c, projects: map[string]*project{}, domains: map[string]string{}, tokens: map[string]*token{}}
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
		if u.ProjectDomain == "" {
			u.ProjectDomain = u.Domain
		}
		ks.domains[domainID(u.Domain)], ks.domains[domainID(u.ProjectDomain)] = u.Domain, u.ProjectDomain
		if len(u.Roles) == 0 {
			u.Roles = []string{"member", "reader"}
		}
		get := func(name string) *project {
			p := byName[u.ProjectDomain+"/"+name]
			if p == nil {
				p = &project{ID: newHexID(), Name: name, DomainID: domainID(u.ProjectDomain)}
				byName[u.ProjectDomain+"/"+name] = p
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
func (ks *keystone) defaultProject() string {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.users[0].project.ID
}

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

type authReq struct {
	Auth struct {
		Identity authIdentity `json:"identity"`
		Scope    *struct {
			Project *struct {
				ID     string    `json:"id"`
				Name   string    `json:"name"`
				Domain reqDomain `json:"domain"`
			} `json:"project"`
		} `json:"scope"`
	} `json:"auth"`
}

// authIdentity is the identity part of POST /v3/auth/tokens.
type authIdentity struct {
	Methods  []string `json:"methods"`
	Password struct {
		User struct {
			ID       string    `json:"id"`
			Name     string    `json:"name"`
			Password string    `json:"password"`
			Domain   reqDomain `json:"domain"`
		} `json:"user"`
	} `json:"password"`
	AppCred struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Secret string `json:"secret"`
		User   struct {
			ID     string    `json:"id"`
			Name   string    `json:"name"`
			Domain reqDomain `json:"domain"`
		} `json:"user"`
	} `json:"application_credential"`
	Token struct {
		ID string `json:"id"`
	} `json:"token"`
}

// domainID maps a domain name to its id ("Default" -> "default").
func domainID(name string) string {
	if name == "" || name == "Default" {
		return "default"
	}
	return strings.ToLower(name)
}

// domainOK says whether a request's domain designates the domain with id
// domID. As Keystone, a name given wins over an id given alongside.
func domainOK(domID string, d reqDomain) bool {
	if d.Name != "" {
		return domainID(d.Name) == domID
	}
	return d.ID == domID
}

// reqDomain is a domain in an authentication request.
type reqDomain struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// errNoDomain is Keystone's answer to a user or project named without a
// domain: names are unique only within a domain.
type errNoDomain string

func (e errNoDomain) Error() string {
	return "Expecting to find domain in " + string(e) + ". The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error."
}

// userMatches says whether a request's user (id, or name and domain)
// designates u; a name without a domain is a malformed request.
func (ks *keystone) userMatches(u *userRec, id, name string, dom reqDomain) (bool, error) {
	if id != "" {
		return u.ID == id, nil
	}
	if dom.ID == "" && dom.Name == "" {
		return false, errNoDomain("user")
	}
	return name != "" && u.Name == name && domainOK(domainID(u.Domain), dom), nil
}

var errUnauthorized = &httpErr{http.StatusUnauthorized, "The request you have made requires authentication."}

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
	t, aerr := ks.newToken(&req)
	ks.mu.Unlock()
	if aerr != nil {
		fail(w, svc, aerr.status, "", aerr.msg)
		return
	}
	w.Header().Set("X-Subject-Token", t.ID)
	writeJSON(w, http.StatusCreated, obj{"token": ks.tokenBody(t)})
}

// newToken checks a token request and records the token; ks.mu is held.
func (ks *keystone) newToken(req *authReq) (*token, *httpErr) {
	method := req.Auth.Identity.Methods[0]
	user, ac, aerr := ks.identify(method, &req.Auth.Identity)
	if aerr != nil {
		return nil, aerr
	}
	proj := user.project
	if sc := req.Auth.Scope; sc != nil {
		if ac != nil {
			// An application credential is bound to its project.
			return nil, &httpErr{http.StatusUnauthorized, "Application credentials cannot request a scope."}
		}
		if sc.Project != nil {
			if proj, aerr = ks.scopedProject(user, sc.Project.ID, sc.Project.Name, sc.Project.Domain); aerr != nil {
				return nil, aerr
			}
		}
	}
	now := time.Now()
	t := &token{ID: "gAAAAA" + newHexID() + newHexID(), user: user, project: proj, Issued: now,
		Expires: now.Add(ks.c.o.TokenTTL), Methods: []string{method}, appCred: ac, auditID: newHexID()[:22]}
	ks.tokens[t.ID] = t
	return t, nil
}

// identify finds the user (and application credential) a request's
// identity designates.
func (ks *keystone) identify(method string, id *authIdentity) (*userRec, *AppCredential, *httpErr) {
	var (
		user *userRec
		ac   *AppCredential
	)
	switch method {
	case "password":
		pu := id.Password.User
		for _, u := range ks.users {
			ok, err := ks.userMatches(u, pu.ID, pu.Name, pu.Domain)
			if err != nil {
				return nil, nil, badRequest(err.Error())
			}
			if ok && u.Password == pu.Password {
				user = u
			}
		}
	case "application_credential":
		a := id.AppCred
		for _, u := range ks.users {
			for i := range u.AppCredentials {
				cand := &u.AppCredentials[i]
				match := a.ID != "" && cand.ID == a.ID
				if a.ID == "" && a.Name != "" && cand.Name == a.Name {
					ok, err := ks.userMatches(u, a.User.ID, a.User.Name, a.User.Domain)
					if err != nil {
						return nil, nil, badRequest(err.Error())
					}
					match = ok
				}
				if match && cand.Secret == a.Secret {
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
	if user == nil {
		return nil, nil, errUnauthorized
	}
	return user, ac, nil
}

// scopedProject is the project a scope names (by id, or by name within a
// domain, which need not be the user's): one the user has a role on.
func (ks *keystone) scopedProject(user *userRec, id, name string, dom reqDomain) (*project, *httpErr) {
	if id == "" && dom.ID == "" && dom.Name == "" {
		return nil, badRequest(errNoDomain("project").Error())
	}
	for _, p := range append([]*project{user.project}, user.others...) {
		if (id != "" && id == p.ID) || (id == "" && name == p.Name && domainOK(p.DomainID, dom)) {
			return p, nil
		}
	}
	return nil, errUnauthorized
}

func (ks *keystone) tokenBody(t *token) obj {
	dom := obj{"id": domainID(t.user.Domain), "name": t.user.Domain}
	b := obj{
		"methods":    t.Methods,
		"user":       obj{"domain": dom, "id": t.user.ID, "name": t.user.Name, "password_expires_at": nil},
		"audit_ids":  []string{t.auditID},
		"expires_at": tsMicroZ(t.Expires),
		"issued_at":  tsMicroZ(t.Issued),
		"project":    obj{"domain": obj{"id": t.project.DomainID, "name": ks.domains[t.project.DomainID]}, "id": t.project.ID, "name": t.project.Name},
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
