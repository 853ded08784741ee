package ark

import (
	"context"
	"fmt"
	"log"

	"github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/pulp"
)

// Values of a repo's `site_pulp` output and of the `synced` output.
const (
	SyncCreated = "created"
	SyncReused  = "reused"
)

// syncSite mirrors the snapshots chosen for os_version into the site Pulp,
// at most c.Concurrency at a time, and returns each plan entry's result
// (nil for entries that are not for os_version). Entries sharing a base
// path are ensured once, so concurrent runs never race each other.
func syncSite(ctx context.Context, c *Config, results []pulp.Result) ([]*pulp.SiteResult, error) {
	sp := c.SitePulp
	logf := func(format string, args ...any) { log.Printf("[INFO] fatimage-ark: "+format, args...) }
	site, err := newSite(ctx, c, logf)
	if err != nil {
		return nil, err
	}
	jobs := siteJobs(c, results)

	out := make([]*pulp.SiteResult, len(c.plan))
	errs := make([]error, len(jobs))
	parallel(len(jobs), c.Concurrency, func(n int) {
		j := jobs[n]
		// Each job reports its own progress lines, prefixed with its
		// repository, so interleaved syncs stay readable.
		jobAPI := *site.API
		jobAPI.Poll.Progress = func(msg string) { logf("site Pulp: %s: %s", j.snap.BasePath(), msg) }
		jobSite := *site
		jobSite.API = &jobAPI
		res, err := jobSite.Ensure(ctx, j.snap)
		if err != nil {
			errs[n] = fmt.Errorf("%s: site Pulp %s: %w", j.where, sp.URL, err)
			return
		}
		logf("site Pulp: %s: %s (%d tasks)", j.snap.BasePath(), syncWord(res.Created), res.Tasks)
		for _, i := range j.indexes {
			out[i] = &res
		}
	})
	var merr *packer.MultiError
	for _, err := range errs {
		if err != nil {
			merr = packer.MultiErrorAppend(merr, err)
		}
	}
	if merr != nil {
		return nil, merr
	}
	return out, nil
}

// newSite makes the site Pulp's clients and checks its API answers before
// any job starts, so a wrong URL fails once rather than once per job.
func newSite(ctx context.Context, c *Config, logf func(string, ...any)) (*pulp.Site, error) {
	sp := c.SitePulp
	opts := pulp.ClientOptions{
		CAFile: sp.CAFile, InsecureSkipVerify: sp.InsecureSkipVerify,
		Timeout: sp.Timeout, MaxConns: c.Concurrency, Logf: logf,
	}
	anon, err := pulp.NewClient(opts)
	if err != nil {
		return nil, fmt.Errorf("site_pulp: %w", err)
	}
	opts.Username, opts.Password = sp.Username, sp.Password
	authed, err := pulp.NewClient(opts)
	if err != nil {
		return nil, fmt.Errorf("site_pulp: %w", err)
	}
	api, err := pulp.NewAPI(sp.URL, opts)
	if err != nil {
		return nil, fmt.Errorf("site_pulp: %w", err)
	}
	api.Poll.Timeout = sp.TaskTimeout
	if _, err := api.Status(ctx); err != nil {
		return nil, fmt.Errorf("site_pulp: %s is not a usable Pulp API: %w", sp.URL, err)
	}
	return &pulp.Site{API: api, ContentURL: sp.ContentURL, Anonymous: anon, Authenticated: authed, Policy: sp.Policy, Logf: logf}, nil
}

// siteJob is one snapshot to ensure on the site Pulp and the plan entries
// (indexes into c.plan) it serves.
type siteJob struct {
	snap    pulp.SiteSnapshot
	where   string
	indexes []int
}

// siteJobs makes one job per distinct base path of the entries for
// os_version, named for the first entry.
func siteJobs(c *Config, results []pulp.Result) []*siteJob {
	var jobs []*siteJob
	byBase := map[string]*siteJob{}
	for i, t := range c.plan {
		if !t.forOS {
			continue
		}
		snap := pulp.SiteSnapshot{
			Path: t.entry.PulpPath, Timestamp: results[i].Timestamp,
			UpstreamURL:      pulp.SnapshotURL(t.contentURL, t.entry.PulpPath, results[i].Timestamp),
			UpstreamUsername: c.Username, UpstreamPassword: c.Password,
		}
		j := byBase[snap.BasePath()]
		if j == nil {
			j = &siteJob{snap: snap, where: fmt.Sprintf("repo %q (%s)", t.entry.Repo, t.entry.Version)}
			byBase[snap.BasePath()] = j
			jobs = append(jobs, j)
		}
		j.indexes = append(j.indexes, i)
	}
	return jobs
}

func syncWord(created bool) string {
	if created {
		return SyncCreated
	}
	return SyncReused
}
