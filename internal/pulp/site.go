package pulp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// SiteSnapshot is one upstream snapshot to mirror into a site Pulp.
type SiteSnapshot struct {
	// Path and Timestamp name the snapshot; the site serves it at the
	// same base path, Path + "/" + Timestamp.
	Path, Timestamp string
	// UpstreamURL is the snapshot's URL on Ark (or another Pulp).
	UpstreamURL string
	// UpstreamUsername and UpstreamPassword go into the site's remote, so
	// the site Pulp can fetch from upstream. They are sent to the site
	// Pulp's API only.
	UpstreamUsername, UpstreamPassword string
}

// BasePath is where the site serves the snapshot.
func (s SiteSnapshot) BasePath() string {
	return strings.Trim(s.Path, "/") + "/" + s.Timestamp
}

// ObjectName is the stable name of the remote, repository and
// distribution made for the snapshot, so a re-run finds them again.
func (s SiteSnapshot) ObjectName() string { return "fatimage/" + s.BasePath() }

// Site mirrors snapshots into a site Pulp.
type Site struct {
	API *API
	// ContentURL is the site's content app base URL.
	ContentURL string
	// Anonymous and Authenticated fetch from the site's content app
	// without and with the site's credentials, to tell whether the
	// content is guarded.
	Anonymous, Authenticated *Client
	// Policy is the remote's download policy: on_demand or immediate.
	Policy string
	// Logf is told about each step.
	Logf func(format string, args ...any)
}

// SiteResult says how a snapshot came to be served by the site.
type SiteResult struct {
	// BaseURL is the snapshot's URL on the site's content app.
	BaseURL string
	// Created is true when anything had to be made (a remote, a
	// repository, a sync, a publication or a distribution); false when
	// a serving distribution was found and left alone.
	Created bool
	// Guarded is true when the site serves the snapshot only to the
	// site's credentials.
	Guarded bool
	// Tasks counts the Pulp tasks started.
	Tasks int
}

// Ensure makes the site serve the snapshot: a distribution at its base
// path that serves repodata/repomd.xml is left alone; otherwise the
// missing remote, repository, sync, publication and distribution are made,
// reusing whatever already exists under the stable names.
func (s *Site) Ensure(ctx context.Context, snap SiteSnapshot) (SiteResult, error) {
	bp := snap.BasePath()
	name := snap.ObjectName()
	res := SiteResult{BaseURL: SnapshotURL(s.ContentURL, snap.Path, snap.Timestamp)}

	dist, err := s.API.DistributionByBasePath(ctx, bp)
	if err != nil {
		return res, err
	}
	if dist != nil && dist.Publication != "" {
		if guarded, err := s.serving(ctx, snap); err == nil {
			res.Guarded = guarded
			s.logf("site Pulp: %s: distribution %s already serves it; left alone", bp, dist.Name)
			return res, nil
		}
	}
	res.Created = true

	repo, err := s.ensureRepository(ctx, bp, name)
	if err != nil || repo == nil {
		// nil without error: the create failed but afterRace found the
		// repository made meanwhile; Ensure stops there, unsynced.
		return res, err
	}
	version, err := s.ensureSynced(ctx, snap, name, repo, &res)
	if err != nil {
		return res, err
	}
	pubHref, err := s.ensurePublication(ctx, bp, name, version, &res)
	if err != nil {
		return res, err
	}
	if err := s.ensureDistribution(ctx, bp, name, dist, pubHref, &res); err != nil {
		return res, err
	}
	guarded, err := s.serving(ctx, snap)
	if err != nil {
		return res, fmt.Errorf("site Pulp serves no repository at %s after distributing %s: %w", res.BaseURL, name, err)
	}
	res.Guarded = guarded
	return res, nil
}

// ensureRepository finds the repository by its stable name or creates it.
func (s *Site) ensureRepository(ctx context.Context, bp, name string) (*Repository, error) {
	a := s.API
	repo, err := a.RepositoryByName(ctx, name)
	if err != nil {
		return nil, err
	}
	if repo == nil {
		s.logf("site Pulp: %s: creating repository %s", bp, name)
		if repo, err = a.CreateRepository(ctx, Repository{Name: name}); err != nil {
			return nil, s.afterRace(err, func() (bool, error) {
				repo, err = a.RepositoryByName(ctx, name)
				return repo != nil, err
			})
		}
	}
	return repo, nil
}

// ensureSynced syncs the repository from upstream unless a version past
// the empty version 0 exists, and returns its latest version.
func (s *Site) ensureSynced(ctx context.Context, snap SiteSnapshot, name string, repo *Repository, res *SiteResult) (string, error) {
	a := s.API
	version := repo.LatestVersionHref
	if version != "" && !strings.HasSuffix(version, "/versions/0/") {
		return version, nil
	}
	remote, err := s.ensureRemote(ctx, snap, name, res)
	if err != nil {
		return "", err
	}
	s.logf("site Pulp: %s: syncing repository %s from %s (policy %s)", snap.BasePath(), name, snap.UpstreamURL, s.Policy)
	task, err := a.Sync(ctx, repo.Href, remote.Href)
	if err != nil {
		return "", fmt.Errorf("syncing repository %s: %w", name, err)
	}
	res.Tasks++
	if _, err := a.Wait(ctx, task); err != nil {
		return "", syncError(name, snap.UpstreamURL, err)
	}
	if repo, err = a.Repository(ctx, repo.Href); err != nil {
		return "", err
	}
	version = repo.LatestVersionHref
	if version == "" || strings.HasSuffix(version, "/versions/0/") {
		return "", fmt.Errorf("syncing repository %s from %s: the sync completed but the repository is still empty", name, snap.UpstreamURL)
	}
	return version, nil
}

// ensurePublication finds or makes the publication of the repository
// version and returns its href.
func (s *Site) ensurePublication(ctx context.Context, bp, name, version string, res *SiteResult) (string, error) {
	a := s.API
	pub, err := a.PublicationFor(ctx, version)
	if err != nil {
		return "", err
	}
	if pub != nil {
		return pub.Href, nil
	}
	s.logf("site Pulp: %s: publishing %s", bp, version)
	task, err := a.Publish(ctx, version)
	if err != nil {
		return "", fmt.Errorf("publishing repository %s: %w", name, err)
	}
	res.Tasks++
	done, err := a.Wait(ctx, task)
	if err != nil {
		return "", fmt.Errorf("publishing repository %s: %w", name, err)
	}
	pubHref := created(done, "/publications/")
	if pubHref == "" {
		return "", fmt.Errorf("publishing repository %s: task %s created no publication", name, done.Href)
	}
	return pubHref, nil
}

// ensureDistribution serves the publication at the base path: dist is the
// distribution found there (or nil), else the one of the stable name is
// reused, created when missing, and repointed when it serves elsewhere.
func (s *Site) ensureDistribution(ctx context.Context, bp, name string, dist *Distribution, pubHref string, res *SiteResult) error {
	a := s.API
	var err error
	if dist == nil {
		if dist, err = a.DistributionByName(ctx, name); err != nil {
			return err
		}
	}
	var task *Task
	switch {
	case dist == nil:
		s.logf("site Pulp: %s: creating distribution %s", bp, name)
		task, err = a.CreateDistribution(ctx, Distribution{Name: name, BasePath: bp, Publication: pubHref})
	case dist.Publication != pubHref || dist.BasePath != bp:
		s.logf("site Pulp: %s: pointing distribution %s at %s", bp, dist.Name, pubHref)
		task, err = a.async(ctx, http.MethodPatch, dist.Href, map[string]any{"publication": pubHref, "base_path": bp})
	}
	if err != nil {
		return fmt.Errorf("distributing repository %s at %s: %w", name, bp, err)
	}
	if task != nil {
		res.Tasks++
		if _, err := a.Wait(ctx, task); err != nil {
			return fmt.Errorf("distributing repository %s at %s: %w", name, bp, err)
		}
	}
	return nil
}

// ensureRemote finds or creates the snapshot's remote and, when found,
// refreshes its URL, credentials and policy (they may have changed since).
func (s *Site) ensureRemote(ctx context.Context, snap SiteSnapshot, name string, res *SiteResult) (*Remote, error) {
	a := s.API
	want := Remote{Name: name, URL: snap.UpstreamURL + "/", Policy: s.Policy, Username: snap.UpstreamUsername, Password: snap.UpstreamPassword}
	remote, err := a.RemoteByName(ctx, name)
	if err != nil {
		return nil, err
	}
	if remote == nil {
		s.logf("site Pulp: %s: creating remote %s for %s", snap.BasePath(), name, snap.UpstreamURL)
		if remote, err = a.CreateRemote(ctx, want); err != nil {
			err = s.afterRace(err, func() (bool, error) {
				remote, err = a.RemoteByName(ctx, name)
				return remote != nil, err
			})
			if err != nil {
				return nil, fmt.Errorf("creating remote %s: %w", name, err)
			}
		} else {
			return remote, nil
		}
	}
	s.logf("site Pulp: %s: updating remote %s", snap.BasePath(), name)
	task, err := a.UpdateRemote(ctx, remote.Href, want)
	if err != nil {
		return nil, fmt.Errorf("updating remote %s: %w", name, err)
	}
	res.Tasks++
	if _, err := a.Wait(ctx, task); err != nil {
		return nil, fmt.Errorf("updating remote %s: %w", name, err)
	}
	return remote, nil
}

// afterRace handles a failed create: when another run (or a retried
// request whose first attempt did land) made the object meanwhile, find
// reports it and the failure is forgotten.
func (s *Site) afterRace(createErr error, find func() (bool, error)) error {
	var ae *APIError
	if !errors.As(createErr, &ae) || ae.StatusCode != http.StatusBadRequest {
		return createErr
	}
	found, err := find()
	if err != nil {
		return err
	}
	if !found {
		return createErr
	}
	return nil
}

// serving checks the snapshot's repomd.xml on the site's content app,
// first without credentials, then with the site's. guarded reports that
// only the latter worked.
func (s *Site) serving(ctx context.Context, snap SiteSnapshot) (guarded bool, err error) {
	err = s.Anonymous.Check(ctx, s.ContentURL, snap.Path, snap.Timestamp)
	var se *StatusError
	if err == nil {
		return false, nil
	}
	if !errors.As(err, &se) || (se.StatusCode != http.StatusUnauthorized && se.StatusCode != http.StatusForbidden) || s.Authenticated == nil {
		return false, err
	}
	if err := s.Authenticated.Check(ctx, s.ContentURL, snap.Path, snap.Timestamp); err != nil {
		return false, err
	}
	return true, nil
}

// refusedRe matches how Pulp's downloader reports an upstream HTTP error
// (aiohttp's ClientResponseError: "401, message='Unauthorized', url=...").
var refusedRe = regexp.MustCompile(`(^|\D)(401|403)(\D|$)`)

// syncError names the repository and, for a refused upstream login, says
// so plainly: the remote carries the Ark credentials.
func syncError(name, upstream string, err error) error {
	var te *TaskError
	if errors.As(err, &te) && te.State == TaskFailed && refusedRe.MatchString(te.Description) {
		return fmt.Errorf("syncing repository %s: %s refused the Ark credentials (the data source's username/password) given to the site Pulp's remote: %w", name, upstream, err)
	}
	return fmt.Errorf("syncing repository %s from %s: %w", name, upstream, err)
}

// created returns the first created resource whose href contains kind.
func created(t *Task, kind string) string {
	for _, h := range t.CreatedResources {
		if strings.Contains(h, kind) {
			return h
		}
	}
	return ""
}

func (s *Site) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}
