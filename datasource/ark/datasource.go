//go:generate packer-sdc struct-markdown

// Package ark is the `fatimage-ark` data source: it resolves Pulp snapshot
// timestamps on StackHPC's Ark or a site's own Pulp, for use in templates.
package ark

import (
	"context"
	"errors"
	"fmt"
	"log"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/packer-plugin-sdk/hcl2helper"
	"github.com/hashicorp/packer-plugin-sdk/packer"
	"github.com/hashicorp/packer-plugin-sdk/template/config"
	"github.com/zclconf/go-cty/cty"

	"github.com/stackhpc/packer-plugin-fatimage/internal/pulp"
	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
	"github.com/stackhpc/packer-plugin-fatimage/internal/timestamps"
)

// Datasource implements packer.Datasource.
type Datasource struct {
	config Config
}

// DatasourceOutput is what templates read as data.fatimage-ark.<name>.*.
type DatasourceOutput struct {
	// The repositories for `os_version`, sorted by name, in the form the
	// `fatimage` provisioner's `repos` takes.
	Repos []Repo `mapstructure:"repos"`
	// Repository name to chosen snapshot timestamp, for `os_version`.
	Timestamps map[string]string `mapstructure:"timestamps"`
	// A short digest of every (name, path, timestamp) in `repos`: equal
	// inputs give equal ids, so it suits image names and properties.
	SnapshotID string `mapstructure:"snapshot_id"`
	// The timestamps file (or the repo blocks) in the appliance's
	// `dnf_repo_timestamps.yml` format with the resolved timestamps, for
	// every OS version it holds, so a pipeline can write its pins back.
	TimestampsYAML string `mapstructure:"timestamps_yaml"`
	// With `site_pulp`: repository name to `created` (the site Pulp had to
	// sync, publish or distribute something for its snapshot) or `reused`
	// (a distribution already served it). Empty without `site_pulp`.
	Synced map[string]string `mapstructure:"synced"`
}

// Repo is one resolved repository.
type Repo struct {
	// Repository name.
	Name string `mapstructure:"name"`
	// File in /etc/yum.repos.d, without `.repo`.
	RepoFile string `mapstructure:"repo_file"`
	// Section name in the repo file.
	RepoName string `mapstructure:"repo_name"`
	// Full URL of the snapshot, for dnf's baseurl.
	BaseURL string `mapstructure:"baseurl"`
	// Repository path below the content URL.
	Path string `mapstructure:"path"`
	// Chosen snapshot timestamp.
	Timestamp string `mapstructure:"timestamp"`
	// The `os_version` the repository was resolved for. The `fatimage`
	// provisioner checks the build VM's Rocky version against it.
	OSVersion string `mapstructure:"os_version"`
	// Whether dnf checks package signatures.
	GPGCheck bool `mapstructure:"gpgcheck"`
	// Why newer snapshots were passed over (for example a 403 from a
	// content guard); empty when the newest was usable. The fatimage
	// provisioner shows it, since Packer gives data sources no output.
	Warning string `mapstructure:"warning"`
	// With `site_pulp`: `created` or `reused`, as in `synced`. The
	// fatimage provisioner prints a summary of these.
	SitePulp string `mapstructure:"site_pulp"`
	// `none` when the baseurl needs no credentials (a site Pulp whose
	// content is not guarded), so the fatimage provisioner writes none
	// for this repository; empty otherwise, and the provisioner uses its
	// `repo_username` and `repo_password`.
	Credentials string `mapstructure:"credentials"`
}

// ConfigSpec implements packer.Datasource.
func (d *Datasource) ConfigSpec() hcldec.ObjectSpec { return d.config.FlatMapstructure().HCL2Spec() }

// OutputSpec implements packer.Datasource.
func (d *Datasource) OutputSpec() hcldec.ObjectSpec {
	return (&DatasourceOutput{}).FlatMapstructure().HCL2Spec()
}

// Configure implements packer.Datasource. It makes no network call.
func (d *Datasource) Configure(raws ...interface{}) error {
	if err := config.Decode(&d.config, nil, raws...); err != nil {
		return err
	}
	return redact.Error(d.config.Prepare())
}

// Execute implements packer.Datasource. Ctrl-C stops it at once
// (interruptible), and its error never carries a credential.
func (d *Datasource) Execute() (cty.Value, error) {
	ctx, stop := interruptible(context.Background())
	defer stop()
	out, err := Resolve(ctx, &d.config, func(msg string) { log.Printf("[WARN] fatimage-ark: %s", msg) })
	if cause := context.Cause(ctx); err != nil && cause != nil {
		err = fmt.Errorf("%w: stopped resolving snapshots (%d repositories planned)", cause, len(d.config.plan))
	}
	if err != nil {
		return cty.NullVal(cty.EmptyObject), redact.Error(err)
	}
	return hcl2helper.HCL2ValueFromConfig(out, d.OutputSpec()), nil
}

// Resolve chooses a snapshot for every planned entry, at most
// c.Concurrency at a time, and assembles the outputs. Every failure is
// reported, each naming its repository, OS version, URL and status.
func Resolve(ctx context.Context, c *Config, warn func(string)) (DatasourceOutput, error) {
	client, err := pulp.NewClient(pulp.ClientOptions{
		Username:           c.Username,
		Password:           c.Password,
		CAFile:             c.CAFile,
		InsecureSkipVerify: c.InsecureSkipVerify,
		Timeout:            c.Timeout,
		MaxConns:           c.Concurrency,
	})
	if err != nil {
		return DatasourceOutput{}, err
	}
	results, errs := resolvePlan(ctx, c, client)

	// The site Pulp is synced only when every entry resolved: a failed
	// entry has no snapshot to mirror, and the data source fails anyway.
	var site []*pulp.SiteResult
	if c.SitePulp != nil && !slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		if site, err = syncSite(ctx, c, results); err != nil {
			return DatasourceOutput{}, err
		}
	}

	out, merr := assemble(c, results, errs, site, warn)
	if merr != nil {
		return DatasourceOutput{}, resolveError(merr.Errors, len(c.plan))
	}
	slices.SortFunc(out.Repos, func(a, b Repo) int { return strings.Compare(a.Name, b.Name) })
	out.SnapshotID = snapshotID(out.Repos)
	yaml, err := c.file.Marshal()
	if err != nil {
		return DatasourceOutput{}, fmt.Errorf("rendering timestamps_yaml: %w", err)
	}
	out.TimestampsYAML = string(yaml)
	return out, nil
}

// resolvePlan resolves every planned entry, each result and error at the
// entry's index in c.plan.
func resolvePlan(ctx context.Context, c *Config, client *pulp.Client) ([]pulp.Result, []error) {
	results := make([]pulp.Result, len(c.plan))
	errs := make([]error, len(c.plan))
	parallel(len(c.plan), c.Concurrency, func(i int) {
		t := c.plan[i]
		results[i], errs[i] = client.Resolve(ctx, pulp.Query{
			ContentURL: t.contentURL,
			Path:       t.entry.PulpPath,
			Mode:       c.mode,
			Pinned:     t.entry.PulpTimestamp,
			NotAfter:   c.notAfter,
			Verify:     *c.Verify,
		})
	})
	return results, errs
}

// parallel runs do(0) to do(n-1), at most limit at a time, and returns
// when all have.
func parallel(n, limit int, do func(i int)) {
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			do(i)
		}()
	}
	wg.Wait()
}

// assemble writes every resolved timestamp into c.file and builds the
// outputs of the entries for os_version; it collects every entry's error,
// each named, and passes each entry's warnings to warn.
func assemble(c *Config, results []pulp.Result, errs []error, site []*pulp.SiteResult, warn func(string)) (DatasourceOutput, *packer.MultiError) {
	var merr *packer.MultiError
	out := DatasourceOutput{Timestamps: map[string]string{}}
	for i, t := range c.plan {
		e := t.entry
		where := fmt.Sprintf("repo %q (%s)", e.Repo, e.Version)
		if errs[i] != nil {
			merr = packer.MultiErrorAppend(merr, fmt.Errorf("%s: %w", where, errs[i]))
			continue
		}
		for _, w := range results[i].Warnings {
			warn(where + ": " + w)
		}
		e.PulpTimestamp = results[i].Timestamp
		c.file.Put(e)
		if !t.forOS {
			continue
		}
		repo := repoOutput(t.contentURL, e, strings.Join(results[i].Warnings, "; "))
		repo.OSVersion = c.OSVersion
		if site != nil && site[i] != nil {
			repo.BaseURL = site[i].BaseURL
			repo.SitePulp = syncWord(site[i].Created)
			if !site[i].Guarded {
				repo.Credentials = "none"
			}
			if out.Synced == nil {
				out.Synced = map[string]string{}
			}
			out.Synced[e.Repo] = repo.SitePulp
		}
		out.Repos = append(out.Repos, repo)
		out.Timestamps[e.Repo] = e.PulpTimestamp
	}
	return out, merr
}

// repoOutput is the `repos` output of a resolved entry served from
// contentURL.
func repoOutput(contentURL string, e timestamps.Entry, warning string) Repo {
	repoName := e.RepoName
	if repoName == "" {
		repoName = e.Repo
	}
	return Repo{
		Name:      e.Repo,
		RepoFile:  e.RepoFile,
		RepoName:  repoName,
		BaseURL:   pulp.SnapshotURL(contentURL, e.PulpPath, e.PulpTimestamp),
		Path:      e.PulpPath,
		Timestamp: e.PulpTimestamp,
		GPGCheck:  e.GPGCheck == nil || *e.GPGCheck,
		Warning:   warning,
	}
}

// snapshotID digests the sorted (name, path, timestamp) triples: 12 hex
// characters keep image names short while collisions stay negligible.
func snapshotID(repos []Repo) string {
	refs := make([]pulp.SnapshotRef, len(repos))
	for i, r := range repos {
		refs[i] = pulp.SnapshotRef{Name: r.Name, Path: r.Path, Timestamp: r.Timestamp}
	}
	return pulp.SnapshotID(refs)
}

// resolveError is the data source's error for the repositories that could
// not be resolved. Packer shows only the first line next to the data
// source's name, so that line says what they have in common (refused
// credentials) or how many failed and the first cause; every repository's
// own error follows.
func resolveError(errs []error, total int) error {
	if len(errs) == 1 {
		return errs[0]
	}
	var b strings.Builder
	refused := 0
	for _, e := range errs {
		if errors.Is(e, pulp.ErrCredentialsRefused) {
			refused++
		}
	}
	if refused == len(errs) {
		fmt.Fprintf(&b, "%d of %d repositories: %v", len(errs), total, pulp.ErrCredentialsRefused)
	} else {
		fmt.Fprintf(&b, "%d of %d repositories could not be resolved, the first: %v", len(errs), total, errs[0])
	}
	for _, e := range errs {
		b.WriteString("\n* " + e.Error())
	}
	return errors.New(b.String())
}
