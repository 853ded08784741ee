package pulp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// apiPrefix is where pulpcore mounts its REST API.
const apiPrefix = "/pulp/api/v3/"

// API talks to a Pulp server's REST API (pulpcore 3 with pulp_rpm): the
// objects a site mirror of Ark snapshots needs, and its tasks.
type API struct {
	base               string // scheme://host[:port][/prefix], no trailing slash
	http               *http.Client
	username, password string
	// Poll bounds how tasks are waited for.
	Poll PollOptions
	logf func(format string, args ...any)
}

// PollOptions bounds the wait for one task.
type PollOptions struct {
	// Timeout is how long one task may take before it is cancelled.
	Timeout time.Duration
	// Initial and Max are the first and the largest pause between polls.
	Initial, Max time.Duration
	// Progress, when set, is told about each change of a running task's
	// progress reports.
	Progress func(msg string)
}

// NewAPI builds an API client for the Pulp whose API base (the URL before
// /pulp/api/v3/) is baseURL. It makes no network call.
func NewAPI(baseURL string, o ClientOptions) (*API, error) {
	hc, err := newHTTPClient(o, nil)
	if err != nil {
		return nil, err
	}
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &API{
		base: strings.TrimSuffix(baseURL, "/"), http: hc,
		username: o.Username, password: o.Password,
		Poll: PollOptions{Timeout: time.Hour, Initial: 200 * time.Millisecond, Max: 5 * time.Second},
		logf: logf,
	}, nil
}

// APIError is a non-2xx answer of the REST API. Detail is Pulp's own text
// (the "detail" of a DRF error, or the field errors of a 400), which
// never holds a password: Pulp does not echo write-only fields.
type APIError struct {
	Method, URL string
	StatusCode  int
	Status      string
	Detail      string
}

func (e *APIError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("%s %s: %s", e.Method, e.URL, e.Status)
	}
	return fmt.Sprintf("%s %s: %s: %s", e.Method, e.URL, e.Status, e.Detail)
}

// errorDetail renders a DRF error body: {"detail": "..."} or
// {"field": ["message", ...], ...}, falling back to the raw text.
func errorDetail(body []byte) string {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return strings.TrimSpace(string(body))
	}
	if d, ok := m["detail"].(string); ok {
		return d
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		var msgs []string
		switch v := m[k].(type) {
		case []any:
			for _, x := range v {
				msgs = append(msgs, fmt.Sprint(x))
			}
		default:
			msgs = append(msgs, fmt.Sprint(v))
		}
		parts = append(parts, k+": "+strings.Join(msgs, " "))
	}
	return strings.Join(parts, "; ")
}

// abs turns an href ("/pulp/api/v3/...") or a path below the API prefix
// into a full URL.
func (a *API) abs(ref string) string {
	if strings.HasPrefix(ref, a.base+"/") {
		return ref
	}
	if strings.HasPrefix(ref, "/") {
		return a.base + ref
	}
	return a.base + apiPrefix + ref
}

// maxAnswerBytes bounds one API answer: a page of 100 objects is tens of
// kilobytes.
const maxAnswerBytes = 4 << 20

// do sends one request with a JSON body (nil for none) and decodes a 2xx
// JSON answer into out (nil to discard).
func (a *API) do(ctx context.Context, method, ref string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	u := a.abs(ref)
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.username != "" || a.password != "" {
		req.SetBasicAuth(a.username, a.password)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return fmt.Errorf("%s %s: reading answer: %w", method, u, err)
	}
	if len(data) > maxAnswerBytes {
		return fmt.Errorf("%s %s: %s: the answer is larger than %d MiB (the cap)", method, u, statusText(resp), maxAnswerBytes>>20)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &APIError{Method: method, URL: u, StatusCode: resp.StatusCode, Status: statusText(resp), Detail: errorDetail(data)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: answer is not the expected JSON: %w", method, u, err)
	}
	return nil
}

// Status is the part of GET status/ the client reads.
type Status struct {
	Versions []struct {
		Component string `json:"component"`
		Version   string `json:"version"`
	} `json:"versions"`
	OnlineWorkers []json.RawMessage `json:"online_workers"`
}

// Status fetches status/, which proves the URL is a Pulp with pulp_rpm.
func (a *API) Status(ctx context.Context) (Status, error) {
	var s Status
	if err := a.do(ctx, http.MethodGet, "status/", nil, &s); err != nil {
		return s, err
	}
	for _, v := range s.Versions {
		if v.Component == "rpm" {
			return s, nil
		}
	}
	return s, fmt.Errorf("GET %s: this Pulp has no rpm plugin (pulp_rpm)", a.abs("status/"))
}

// Remote is an RPM remote. Password is write-only: Pulp never returns it.
type Remote struct {
	Href          string `json:"pulp_href,omitempty"`
	Name          string `json:"name"`
	URL           string `json:"url"`
	Policy        string `json:"policy,omitempty"`
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	TLSValidation *bool  `json:"tls_validation,omitempty"`
}

// Repository is an RPM repository.
type Repository struct {
	Href              string `json:"pulp_href,omitempty"`
	Name              string `json:"name"`
	LatestVersionHref string `json:"latest_version_href,omitempty"`
	Remote            string `json:"remote,omitempty"`
}

// Publication is an RPM publication of one repository version.
type Publication struct {
	Href              string `json:"pulp_href"`
	RepositoryVersion string `json:"repository_version"`
}

// Distribution serves a publication below the content app at BasePath.
type Distribution struct {
	Href         string `json:"pulp_href,omitempty"`
	Name         string `json:"name"`
	BasePath     string `json:"base_path"`
	BaseURL      string `json:"base_url,omitempty"`
	Publication  string `json:"publication,omitempty"`
	ContentGuard string `json:"content_guard,omitempty"`
}

// page is one page of a list answer.
type page[T any] struct {
	Count   int    `json:"count"`
	Next    string `json:"next"`
	Results []T    `json:"results"`
}

// maxPages bounds the pages list reads: every lookup filters by a unique
// name or path, so a real Pulp answers in one page of 100.
const maxPages = 20

// list follows every page of a list endpoint filtered by query.
func list[T any](ctx context.Context, a *API, ref string, query url.Values) ([]T, error) {
	next := a.abs(ref)
	if len(query) > 0 {
		next += "?" + query.Encode()
	}
	var all []T
	for pages := 0; next != ""; pages++ {
		if pages >= maxPages {
			return nil, fmt.Errorf("GET %s: more than %d pages (the cap) for a filter that selects one object", a.abs(ref), maxPages)
		}
		var p page[T]
		if err := a.do(ctx, http.MethodGet, next, nil, &p); err != nil {
			return nil, err
		}
		all = append(all, p.Results...)
		next = p.Next
		if next != "" && !strings.HasPrefix(next, a.base+"/") {
			// Pulp builds "next" from its own idea of its host name; keep
			// talking to the address the user gave.
			nu, err := url.Parse(next)
			if err != nil {
				return nil, fmt.Errorf("GET %s: bad next link: %v", a.abs(ref), err)
			}
			next = a.base + nu.RequestURI()
		}
	}
	return all, nil
}

// one returns the single object a filter selects, or nil.
func one[T any](ctx context.Context, a *API, ref string, query url.Values) (*T, error) {
	all, err := list[T](ctx, a, ref, query)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	return &all[0], nil
}

// Endpoints of pulp_rpm's objects.
const (
	remotesRef       = "remotes/rpm/rpm/"
	repositoriesRef  = "repositories/rpm/rpm/"
	publicationsRef  = "publications/rpm/rpm/"
	distributionsRef = "distributions/rpm/rpm/"
)

// RemoteByName finds a remote by exact name, or nil.
func (a *API) RemoteByName(ctx context.Context, name string) (*Remote, error) {
	return one[Remote](ctx, a, remotesRef, url.Values{"name": {name}})
}

// CreateRemote creates r (synchronously, as Pulp does for remotes).
func (a *API) CreateRemote(ctx context.Context, r Remote) (*Remote, error) {
	var out Remote
	return &out, a.do(ctx, http.MethodPost, remotesRef, r, &out)
}

// UpdateRemote sets the remote's URL, credentials and policy; Pulp does
// this in a task.
func (a *API) UpdateRemote(ctx context.Context, href string, r Remote) (*Task, error) {
	r.Href = ""
	return a.async(ctx, http.MethodPatch, href, r)
}

// RepositoryByName finds a repository by exact name, or nil.
func (a *API) RepositoryByName(ctx context.Context, name string) (*Repository, error) {
	return one[Repository](ctx, a, repositoriesRef, url.Values{"name": {name}})
}

// Repository reads a repository by href.
func (a *API) Repository(ctx context.Context, href string) (*Repository, error) {
	var out Repository
	return &out, a.do(ctx, http.MethodGet, href, nil, &out)
}

// CreateRepository creates r.
func (a *API) CreateRepository(ctx context.Context, r Repository) (*Repository, error) {
	var out Repository
	return &out, a.do(ctx, http.MethodPost, repositoriesRef, r, &out)
}

// Sync starts syncing the repository from the remote.
func (a *API) Sync(ctx context.Context, repoHref, remoteHref string) (*Task, error) {
	return a.async(ctx, http.MethodPost, repoHref+"sync/", map[string]any{"remote": remoteHref})
}

// PublicationFor finds a publication of the repository version, or nil.
func (a *API) PublicationFor(ctx context.Context, versionHref string) (*Publication, error) {
	return one[Publication](ctx, a, publicationsRef, url.Values{"repository_version": {versionHref}})
}

// Publish starts publishing a repository version.
func (a *API) Publish(ctx context.Context, versionHref string) (*Task, error) {
	return a.async(ctx, http.MethodPost, publicationsRef, map[string]any{"repository_version": versionHref})
}

// DistributionByBasePath finds the distribution at basePath, or nil.
func (a *API) DistributionByBasePath(ctx context.Context, basePath string) (*Distribution, error) {
	return one[Distribution](ctx, a, distributionsRef, url.Values{"base_path": {basePath}})
}

// DistributionByName finds a distribution by exact name, or nil.
func (a *API) DistributionByName(ctx context.Context, name string) (*Distribution, error) {
	return one[Distribution](ctx, a, distributionsRef, url.Values{"name": {name}})
}

// CreateDistribution starts creating d.
func (a *API) CreateDistribution(ctx context.Context, d Distribution) (*Task, error) {
	return a.async(ctx, http.MethodPost, distributionsRef, d)
}

// Task is a Pulp task as GET tasks/<id>/ returns it.
type Task struct {
	Href             string   `json:"pulp_href"`
	Name             string   `json:"name"`
	State            string   `json:"state"`
	CreatedResources []string `json:"created_resources"`
	Error            *struct {
		Description string `json:"description"`
	} `json:"error"`
	ProgressReports []struct {
		Message string `json:"message"`
		Code    string `json:"code"`
		State   string `json:"state"`
		Total   *int   `json:"total"`
		Done    int    `json:"done"`
	} `json:"progress_reports"`
}

// Task states (pulpcore's TASK_STATES).
const (
	TaskWaiting   = "waiting"
	TaskRunning   = "running"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCanceled  = "canceled"
	TaskCanceling = "canceling"
	TaskSkipped   = "skipped"
)

// async sends a request Pulp answers with 202 and a task, and returns the
// task's href wrapped in a Task to Wait for.
func (a *API) async(ctx context.Context, method, ref string, body any) (*Task, error) {
	var out struct {
		Task string `json:"task"`
	}
	if err := a.do(ctx, method, ref, body, &out); err != nil {
		return nil, err
	}
	if out.Task == "" {
		return nil, fmt.Errorf("%s %s: answer names no task", method, a.abs(ref))
	}
	return &Task{Href: out.Task, State: TaskWaiting}, nil
}

// TaskError is a task that ended in failure or was cancelled. Description
// is Pulp's error text.
type TaskError struct {
	Href, State, Description string
}

func (e *TaskError) Error() string {
	if e.Description == "" {
		return fmt.Sprintf("task %s %s", e.Href, e.State)
	}
	return fmt.Sprintf("task %s %s: %s", e.Href, e.State, e.Description)
}

// ErrTaskTimeout is wrapped by Wait's error when the task outlives
// PollOptions.Timeout.
var ErrTaskTimeout = errors.New("task did not finish in time")

// Wait polls the task until it ends, at most Poll.Timeout, pausing with
// capped exponential backoff. A task that fails or is cancelled is a
// *TaskError. When the wait ends early (timeout or ctx cancelled) the task
// is cancelled on the server, so nothing keeps running behind our back.
func (a *API) Wait(ctx context.Context, t *Task) (*Task, error) {
	limit := a.Poll.Timeout
	if limit <= 0 {
		limit = time.Hour
	}
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	pause := max(a.Poll.Initial, 10*time.Millisecond)
	lastProgress := ""
	for {
		var cur Task
		err := a.do(wctx, http.MethodGet, t.Href, nil, &cur)
		if err == nil {
			if p := progressText(&cur); p != "" && p != lastProgress && a.Poll.Progress != nil {
				a.Poll.Progress(p)
				lastProgress = p
			}
			switch cur.State {
			case TaskCompleted, TaskSkipped:
				return &cur, nil
			case TaskFailed, TaskCanceled:
				te := &TaskError{Href: cur.Href, State: cur.State}
				if cur.Error != nil {
					te.Description = cur.Error.Description
				}
				return &cur, te
			}
		} else if wctx.Err() == nil {
			return nil, err
		}
		select {
		case <-wctx.Done():
			a.cancelTask(t.Href, ctx.Err() != nil)
			if ctx.Err() != nil {
				return nil, fmt.Errorf("waiting for task %s: %w (cancelled the task)", t.Href, ctx.Err())
			}
			return nil, fmt.Errorf("waiting for task %s: %w within %s (cancelled the task; raise site_pulp.task_timeout if the sync is merely slow)", t.Href, ErrTaskTimeout, limit)
		case <-time.After(pause):
		}
		pause = min(pause*2, max(a.Poll.Max, pause))
	}
}

// cancelTask asks Pulp to cancel a task, best effort, with a fresh short
// deadline since the caller's context has already ended; shorter after
// Ctrl-C (interrupted), where the user waits on it.
func (a *API) cancelTask(href string, interrupted bool) {
	limit := 10 * time.Second
	if interrupted {
		limit = time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if err := a.do(ctx, http.MethodPatch, href, map[string]string{"state": TaskCanceled}, nil); err != nil {
		a.logf("cancelling task %s: %v", href, err)
	}
}

// progressText summarises a task's running progress reports, e.g.
// "Downloading Artifacts 12/40".
func progressText(t *Task) string {
	var parts []string
	for _, p := range t.ProgressReports {
		if p.State != TaskRunning {
			continue
		}
		if p.Total != nil && *p.Total > 0 {
			parts = append(parts, fmt.Sprintf("%s %d/%d", p.Message, p.Done, *p.Total))
		} else {
			parts = append(parts, fmt.Sprintf("%s %d", p.Message, p.Done))
		}
	}
	return strings.Join(parts, ", ")
}
