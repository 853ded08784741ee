package sitepulp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

// Remote is an RPM remote as the API shows it. The password is
// write-only: stored, never returned.
type Remote struct {
	Href          string  `json:"pulp_href"`
	Created       string  `json:"pulp_created"`
	Name          string  `json:"name"`
	URL           string  `json:"url"`
	Policy        string  `json:"policy"`
	Username      *string `json:"username"`
	TLSValidation bool    `json:"tls_validation"`
	password      string
}

// Repository is an RPM repository.
type Repository struct {
	Href              string  `json:"pulp_href"`
	Created           string  `json:"pulp_created"`
	Name              string  `json:"name"`
	VersionsHref      string  `json:"versions_href"`
	LatestVersionHref string  `json:"latest_version_href"`
	Remote            *string `json:"remote"`
	versions          int
}

// version is a repository version: the directory holding its content.
type version struct {
	href, repo string
	number     int
	dir        string // "" for version 0
	// lazy holds the packages an on_demand sync only recorded; remote is
	// where they are fetched from on first request.
	lazy   map[string]bool
	remote Remote
}

// Publication publishes one repository version.
type Publication struct {
	Href              string `json:"pulp_href"`
	Created           string `json:"pulp_created"`
	RepositoryVersion string `json:"repository_version"`
	Repository        string `json:"repository"`
}

// Distribution serves a publication at a base path.
type Distribution struct {
	Href         string  `json:"pulp_href"`
	Created      string  `json:"pulp_created"`
	Name         string  `json:"name"`
	BasePath     string  `json:"base_path"`
	BaseURL      string  `json:"base_url"`
	Publication  *string `json:"publication"`
	ContentGuard *string `json:"content_guard"`
}

// Task is a task as GET tasks/<id>/ shows it.
type Task struct {
	Href             string           `json:"pulp_href"`
	Created          string           `json:"pulp_created"`
	Name             string           `json:"name"`
	State            string           `json:"state"`
	StartedAt        *string          `json:"started_at"`
	FinishedAt       *string          `json:"finished_at"`
	Error            *TaskError       `json:"error"`
	CreatedResources []string         `json:"created_resources"`
	ProgressReports  []ProgressReport `json:"progress_reports"`
	cancel           chan struct{}
}

// TaskError is a failed task's error.
type TaskError struct {
	Description string `json:"description"`
	Traceback   string `json:"traceback"`
}

// ProgressReport is one of a task's progress counters.
type ProgressReport struct {
	Message string `json:"message"`
	Code    string `json:"code"`
	State   string `json:"state"`
	Total   *int   `json:"total"`
	Done    int    `json:"done"`
}

// validation collects DRF-style field errors: {"field": ["message"]}.
type validation map[string][]string

func (v validation) add(field, msg string) { v[field] = append(v[field], msg) }

func (v validation) fail(w http.ResponseWriter) bool {
	if len(v) == 0 {
		return false
	}
	writeJSON(w, http.StatusBadRequest, v)
	return true
}

// serveAPI answers /pulp/api/v3/...
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	rel := strings.TrimPrefix(r.URL.Path, APIPrefix)
	if !s.authorized(w, r) {
		return
	}
	var body map[string]any
	if r.Method == http.MethodPost || r.Method == http.MethodPatch || r.Method == http.MethodPut {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeJSON(w, http.StatusBadRequest, detail("JSON parse error - "+err.Error()))
			return
		}
	}
	parts := strings.Split(strings.TrimSuffix(rel, "/"), "/")
	if !strings.HasSuffix(rel, "/") {
		// DRF with APPEND_SLASH would redirect a GET; writes cannot be.
		writeJSON(w, http.StatusNotFound, detail("Not found."))
		return
	}
	switch {
	case rel == "status/" && r.Method == http.MethodGet:
		s.serveStatus(w, r)
	case len(parts) == 3 && rel == "remotes/rpm/rpm/":
		s.collection(w, r, body, s.listRemotes, s.createRemote)
	case len(parts) == 4 && parts[0] == "remotes":
		s.serveRemote(w, r, body)
	case rel == "repositories/rpm/rpm/":
		s.collection(w, r, body, s.listRepositories, s.createRepository)
	case len(parts) == 4 && parts[0] == "repositories":
		s.serveObject(w, r, func() (any, bool) {
			s.mu.Lock()
			defer s.mu.Unlock()
			x, ok := s.repos["/"+APIPrefix[1:]+rel]
			return x, ok
		})
	case len(parts) == 5 && parts[0] == "repositories" && parts[4] == "sync" && r.Method == http.MethodPost:
		s.startSync(w, r, "/"+APIPrefix[1:]+strings.TrimSuffix(rel, "sync/"), body)
	case rel == "publications/rpm/rpm/":
		s.collection(w, r, body, s.listPublications, s.createPublication)
	case len(parts) == 4 && parts[0] == "publications":
		s.serveObject(w, r, func() (any, bool) {
			s.mu.Lock()
			defer s.mu.Unlock()
			x, ok := s.pubs["/"+APIPrefix[1:]+rel]
			return x, ok
		})
	case rel == "distributions/rpm/rpm/":
		s.collection(w, r, body, s.listDistributions, s.createDistribution)
	case len(parts) == 4 && parts[0] == "distributions":
		s.serveDistribution(w, r, "/"+APIPrefix[1:]+rel, body)
	case rel == "tasks/":
		s.collection(w, r, body, s.listTasks, nil)
	case len(parts) == 2 && parts[0] == "tasks":
		s.serveTask(w, r, "/"+APIPrefix[1:]+rel, body)
	default:
		writeJSON(w, http.StatusNotFound, detail("Not found."))
	}
}

func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"versions": []map[string]string{
			{"component": "core", "version": "3.49.0", "package": "pulpcore", "module": "pulpcore.app", "domain_compatible": "true"},
			{"component": "rpm", "version": "3.26.1", "package": "pulp-rpm", "module": "pulp_rpm.app", "domain_compatible": "true"},
		},
		"online_workers":      []map[string]string{{"name": "sitepulp-worker", "pulp_href": APIPrefix + "workers/" + newID() + "/"}},
		"online_content_apps": []map[string]string{{"name": "sitepulp-content"}},
		"database_connection": map[string]bool{"connected": true},
		"redis_connection":    map[string]bool{"connected": false},
		"storage":             map[string]int{"total": 0, "used": 0, "free": 0},
		"content_settings":    map[string]string{"content_origin": s.URL(), "content_path_prefix": "/pulp/content/"},
		"domain_enabled":      false,
	})
}

// collection serves a list (GET) and, when create is set, POST.
func (s *Server) collection(w http.ResponseWriter, r *http.Request, body map[string]any, list func(url.Values) []any, create func(http.ResponseWriter, *http.Request, map[string]any)) {
	switch {
	case r.Method == http.MethodGet:
		s.paginate(w, r, list(r.URL.Query()))
	case r.Method == http.MethodPost && create != nil:
		create(w, r, body)
	default:
		writeJSON(w, http.StatusMethodNotAllowed, detail(fmt.Sprintf("Method %q not allowed.", r.Method)))
	}
}

// paginate answers limit/offset pages as DRF's LimitOffsetPagination
// does, with absolute next/previous links.
func (s *Server) paginate(w http.ResponseWriter, r *http.Request, all []any) {
	q := r.URL.Query()
	limit, offset := 100, 0
	if v, err := strconv.Atoi(q.Get("limit")); err == nil && v > 0 {
		limit = v
	}
	if v, err := strconv.Atoi(q.Get("offset")); err == nil && v > 0 {
		offset = v
	}
	link := func(off int) *string {
		q.Set("limit", strconv.Itoa(limit))
		q.Set("offset", strconv.Itoa(off))
		u := "http://" + r.Host + r.URL.Path + "?" + q.Encode()
		return &u
	}
	var next, prev *string
	end := min(offset+limit, len(all))
	if offset > len(all) {
		offset, end = len(all), len(all)
	}
	if end < len(all) {
		next = link(end)
	}
	if offset > 0 {
		prev = link(max(offset-limit, 0))
	}
	writeJSON(w, http.StatusOK, map[string]any{"count": len(all), "next": next, "previous": prev, "results": all[offset:end]})
}

// match reports whether every filter the query gives equals the
// object's field.
func match(q url.Values, fields map[string]string) bool {
	for k, want := range fields {
		if v := q.Get(k); v != "" && v != want {
			return false
		}
	}
	return true
}

// listOf lists the objects of m (oldest first) whose filter fields match
// the query; describe gives an object's sort key and filter fields.
func listOf[T any](s *Server, m map[string]*T, q url.Values, describe func(*T) (string, map[string]string)) []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := make([]*T, 0, len(m))
	for _, v := range m {
		all = append(all, v)
	}
	key := func(x *T) string { k, _ := describe(x); return k }
	slices.SortFunc(all, func(a, b *T) int { return strings.Compare(key(a), key(b)) })
	var out []any
	for _, x := range all {
		if _, fields := describe(x); match(q, fields) {
			out = append(out, *x)
		}
	}
	return out
}

func (s *Server) listRemotes(q url.Values) []any {
	return listOf(s, s.remotes, q, func(x *Remote) (string, map[string]string) {
		return x.Created + x.Href, map[string]string{"name": x.Name}
	})
}

func (s *Server) listRepositories(q url.Values) []any {
	return listOf(s, s.repos, q, func(x *Repository) (string, map[string]string) {
		return x.Created + x.Href, map[string]string{"name": x.Name}
	})
}

func (s *Server) listPublications(q url.Values) []any {
	return listOf(s, s.pubs, q, func(x *Publication) (string, map[string]string) {
		return x.Created + x.Href, map[string]string{"repository_version": x.RepositoryVersion, "repository": x.Repository}
	})
}

func (s *Server) listDistributions(q url.Values) []any {
	return listOf(s, s.dists, q, func(x *Distribution) (string, map[string]string) {
		return x.Created + x.Href, map[string]string{"name": x.Name, "base_path": x.BasePath}
	})
}

func (s *Server) listTasks(q url.Values) []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []any
	for _, h := range s.taskOrder {
		x := s.tasks[h]
		if match(q, map[string]string{"state": x.State, "name": x.Name}) {
			out = append(out, *x)
		}
	}
	return out
}

// str reads an optional string field, reporting a wrong type.
func str(body map[string]any, field string, v validation) (string, bool) {
	raw, ok := body[field]
	if !ok || raw == nil {
		return "", false
	}
	sv, isStr := raw.(string)
	if !isStr {
		v.add(field, "Not a valid string.")
		return "", false
	}
	return sv, true
}

func required(body map[string]any, field string, v validation) string {
	sv, ok := str(body, field, v)
	if !ok && v[field] == nil {
		v.add(field, "This field is required.")
	}
	return sv
}

var policies = []string{"immediate", "on_demand", "streamed"}

// checkRemoteFields validates the writable fields of a remote; partial
// leaves out the required checks of PATCH.
func (s *Server) checkRemoteFields(body map[string]any, v validation, partial bool, self string) {
	if !partial {
		required(body, "name", v)
		required(body, "url", v)
	}
	if name, ok := str(body, "name", v); ok {
		for _, x := range s.remotes {
			if x.Name == name && x.Href != self {
				v.add("name", "This field must be unique.")
			}
		}
	}
	if u, ok := str(body, "url", v); ok {
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https" && pu.Scheme != "file") || pu.Host == "" {
			v.add("url", "Enter a valid URL.")
		}
	}
	if p, ok := str(body, "policy", v); ok && !slices.Contains(policies, p) {
		v.add("policy", fmt.Sprintf("%q is not a valid choice.", p))
	}
}

func applyRemote(x *Remote, body map[string]any) {
	if v, ok := body["name"].(string); ok {
		x.Name = v
	}
	if v, ok := body["url"].(string); ok {
		x.URL = v
	}
	if v, ok := body["policy"].(string); ok {
		x.Policy = v
	}
	if v, ok := body["username"].(string); ok {
		x.Username = &v
	}
	if v, ok := body["password"].(string); ok {
		x.password = v
	}
	if v, ok := body["tls_validation"].(bool); ok {
		x.TLSValidation = v
	}
}

func (s *Server) createRemote(w http.ResponseWriter, r *http.Request, body map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := validation{}
	s.checkRemoteFields(body, v, false, "")
	if v.fail(w) {
		return
	}
	x := &Remote{Href: APIPrefix + "remotes/rpm/rpm/" + newID() + "/", Created: now(), Policy: "immediate", TLSValidation: true}
	applyRemote(x, body)
	s.remotes[x.Href] = x
	writeJSON(w, http.StatusCreated, *x)
}

// serveRemote reads (GET) or updates (PATCH, in a task) one remote.
func (s *Server) serveRemote(w http.ResponseWriter, r *http.Request, body map[string]any) {
	serveUpdatable(s, w, r, s.remotes, r.URL.Path,
		func(v validation) { s.checkRemoteFields(body, v, true, r.URL.Path) },
		func(x *Remote) { applyRemote(x, body) })
}

// serveUpdatable answers GET of one object of m, and PATCH, which is
// validated at once (check, under s.mu) and applied in a task (apply,
// under s.mu) as pulpcore's general_update does.
func serveUpdatable[T any](s *Server, w http.ResponseWriter, r *http.Request, m map[string]*T, href string, check func(validation), apply func(*T)) {
	s.mu.Lock()
	x, ok := m[href]
	if !ok {
		s.mu.Unlock()
		writeJSON(w, http.StatusNotFound, detail("Not found."))
		return
	}
	switch r.Method {
	case http.MethodGet:
		cp := *x
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, cp)
	case http.MethodPatch:
		v := validation{}
		check(v)
		s.mu.Unlock()
		if v.fail(w) {
			return
		}
		s.spawn(w, "pulpcore.app.tasks.base.general_update", func(t *Task) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			apply(x)
			return nil
		})
	default:
		s.mu.Unlock()
		writeJSON(w, http.StatusMethodNotAllowed, detail(fmt.Sprintf("Method %q not allowed.", r.Method)))
	}
}

func (s *Server) createRepository(w http.ResponseWriter, r *http.Request, body map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := validation{}
	name := required(body, "name", v)
	for _, x := range s.repos {
		if x.Name == name {
			v.add("name", "This field must be unique.")
		}
	}
	remote, hasRemote := str(body, "remote", v)
	if hasRemote && s.remotes[remote] == nil {
		v.add("remote", "Invalid hyperlink - Object does not exist.")
	}
	if v.fail(w) {
		return
	}
	id := newID()
	x := &Repository{Href: APIPrefix + "repositories/rpm/rpm/" + id + "/", Created: now(), Name: name}
	x.VersionsHref = x.Href + "versions/"
	x.LatestVersionHref = x.VersionsHref + "0/"
	if hasRemote {
		x.Remote = &remote
	}
	s.repos[x.Href] = x
	s.versions[x.LatestVersionHref] = &version{href: x.LatestVersionHref, repo: x.Href}
	writeJSON(w, http.StatusCreated, *x)
}

// serveObject answers GET of a read-only object.
func (s *Server) serveObject(w http.ResponseWriter, r *http.Request, find func() (any, bool)) {
	x, ok := find()
	switch {
	case !ok:
		writeJSON(w, http.StatusNotFound, detail("Not found."))
	case r.Method != http.MethodGet:
		writeJSON(w, http.StatusMethodNotAllowed, detail(fmt.Sprintf("Method %q not allowed.", r.Method)))
	default:
		s.mu.Lock()
		defer s.mu.Unlock()
		switch o := x.(type) {
		case *Repository:
			writeJSON(w, http.StatusOK, *o)
		case *Publication:
			writeJSON(w, http.StatusOK, *o)
		}
	}
}

func (s *Server) startSync(w http.ResponseWriter, r *http.Request, repoHref string, body map[string]any) {
	s.mu.Lock()
	repo, ok := s.repos[repoHref]
	if !ok {
		s.mu.Unlock()
		writeJSON(w, http.StatusNotFound, detail("Not found."))
		return
	}
	v := validation{}
	remoteHref, given := str(body, "remote", v)
	if !given && repo.Remote != nil {
		remoteHref = *repo.Remote
	}
	remote := s.remotes[remoteHref]
	switch {
	case len(v) > 0:
	case remoteHref == "":
		v.add("remote", "A remote must be specified either with the repository or in the sync request.")
	case remote == nil:
		v.add("remote", "Invalid hyperlink - Object does not exist.")
	}
	var snapshot Remote
	if remote != nil {
		snapshot = *remote
	}
	s.mu.Unlock()
	if v.fail(w) {
		return
	}
	s.spawn(w, "pulp_rpm.app.tasks.synchronizing.synchronize", func(t *Task) error {
		return s.sync(t, repo, snapshot)
	})
}

func (s *Server) createPublication(w http.ResponseWriter, r *http.Request, body map[string]any) {
	s.mu.Lock()
	v := validation{}
	verHref, hasVer := str(body, "repository_version", v)
	repoHref, hasRepo := str(body, "repository", v)
	switch {
	case hasVer && hasRepo:
		v.add("non_field_errors", "Either the 'repository' or 'repository_version' need to be specified but not both.")
	case hasRepo:
		if repo := s.repos[repoHref]; repo == nil {
			v.add("repository", "Invalid hyperlink - Object does not exist.")
		} else {
			verHref = repo.LatestVersionHref
		}
	case hasVer:
		if s.versions[verHref] == nil {
			v.add("repository_version", "Invalid hyperlink - Object does not exist.")
		}
	case len(v) == 0:
		v.add("non_field_errors", "Either the 'repository' or 'repository_version' need to be specified.")
	}
	s.mu.Unlock()
	if v.fail(w) {
		return
	}
	s.spawn(w, "pulp_rpm.app.tasks.publishing.publish", func(t *Task) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		ver := s.versions[verHref]
		p := &Publication{Href: APIPrefix + "publications/rpm/rpm/" + newID() + "/", Created: now(), RepositoryVersion: verHref, Repository: ver.repo}
		s.pubs[p.Href] = p
		t.CreatedResources = append(t.CreatedResources, p.Href)
		return nil
	})
}

// checkDistribution validates a distribution's writable fields under s.mu.
func (s *Server) checkDistribution(body map[string]any, v validation, partial bool, self string) {
	if !partial {
		required(body, "name", v)
		required(body, "base_path", v)
	}
	if name, ok := str(body, "name", v); ok {
		for _, x := range s.dists {
			if x.Name == name && x.Href != self {
				v.add("name", "This field must be unique.")
			}
		}
	}
	if bp, ok := str(body, "base_path", v); ok {
		if err := pulpfake.ValidateBasePath(bp); err != nil || strings.HasPrefix(bp, "/") {
			v.add("base_path", "Invalid base path.")
		}
		for _, x := range s.dists {
			if x.Href != self && (x.BasePath == bp || strings.HasPrefix(x.BasePath, bp+"/") || strings.HasPrefix(bp, x.BasePath+"/")) {
				v.add("base_path", fmt.Sprintf("Overlaps with existing distribution '%s'", x.Name))
			}
		}
	}
	if p, ok := str(body, "publication", v); ok && s.pubs[p] == nil {
		v.add("publication", "Invalid hyperlink - Object does not exist.")
	}
}

// publish makes the content app serve d (under s.mu).
func (s *Server) publish(d *Distribution) {
	if d.Publication == nil {
		s.content.RemoveDistribution(d.BasePath)
		return
	}
	ver := s.versions[s.pubs[*d.Publication].RepositoryVersion]
	s.content.AddDistribution(pulpfake.Distribution{BasePath: d.BasePath, Dir: ver.dir, Guard: s.opts.ContentGuard})
}

func applyDistribution(d *Distribution, body map[string]any) {
	if v, ok := body["name"].(string); ok {
		d.Name = v
	}
	if v, ok := body["base_path"].(string); ok {
		d.BasePath = v
	}
	if v, ok := body["publication"].(string); ok {
		d.Publication = &v
	}
}

func (s *Server) createDistribution(w http.ResponseWriter, r *http.Request, body map[string]any) {
	s.mu.Lock()
	v := validation{}
	s.checkDistribution(body, v, false, "")
	s.mu.Unlock()
	if v.fail(w) {
		return
	}
	s.spawn(w, "pulpcore.app.tasks.base.general_create", func(t *Task) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		// Checked again: another task may have taken the name meanwhile.
		v := validation{}
		s.checkDistribution(body, v, false, "")
		if len(v) > 0 {
			out, _ := json.Marshal(v)
			return fmt.Errorf("%s", out)
		}
		d := &Distribution{Href: APIPrefix + "distributions/rpm/rpm/" + newID() + "/", Created: now()}
		applyDistribution(d, body)
		d.BaseURL = s.ContentURL() + "/" + d.BasePath + "/"
		s.dists[d.Href] = d
		s.publish(d)
		t.CreatedResources = append(t.CreatedResources, d.Href)
		return nil
	})
}

func (s *Server) serveDistribution(w http.ResponseWriter, r *http.Request, href string, body map[string]any) {
	serveUpdatable(s, w, r, s.dists, href,
		func(v validation) { s.checkDistribution(body, v, true, href) },
		func(d *Distribution) {
			s.content.RemoveDistribution(d.BasePath)
			applyDistribution(d, body)
			d.BaseURL = s.ContentURL() + "/" + d.BasePath + "/"
			s.publish(d)
		})
}

// serveTask reads a task, or cancels it with PATCH {"state": "canceled"}.
func (s *Server) serveTask(w http.ResponseWriter, r *http.Request, href string, body map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[href]
	if !ok {
		writeJSON(w, http.StatusNotFound, detail("Not found."))
		return
	}
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, *t)
	case http.MethodPatch:
		if body["state"] != "canceled" {
			writeJSON(w, http.StatusBadRequest, validation{"state": {`Only "canceled" is accepted.`}})
			return
		}
		if t.State != "waiting" && t.State != "running" {
			writeJSON(w, http.StatusConflict, detail(fmt.Sprintf("The task cannot be canceled because it is in state %s.", t.State)))
			return
		}
		t.State = "canceling"
		close(t.cancel)
		writeJSON(w, http.StatusOK, *t)
	default:
		writeJSON(w, http.StatusMethodNotAllowed, detail(fmt.Sprintf("Method %q not allowed.", r.Method)))
	}
}
