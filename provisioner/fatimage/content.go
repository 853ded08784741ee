package fatimage

import (
	"context"
	"fmt"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/dashboards"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/downloads"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/git"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/rpms"
)

// Content beyond RPMs (issue #14). Each kind has its config struct,
// validation and scripts in its own content_<kind>.go and scripts/<kind>.sh
// (the helpers they share in scripts/content.sh);
// this file holds the two hooks Provision calls: fetch and verify every
// URL-based kind before any package work (so a bad checksum or pin
// changes nothing), and put everything in place after the packages.

// contentState is what one run learnt while fetching: the commit each
// git checkout resolved to, for the install and image.json.
type contentState struct {
	// containerDigests are the manifest digests containers resolved to.
	containerDigests []string
	// fetched and installed are what the content kinds' fetch and
	// install scripts printed, by option (content.Env); records their
	// image.json records, by option.
	fetched, installed map[string]string
	records            map[string]any
	// pythonGitCommits are the commits python_envs' git requirements
	// were installed from, by "<env> <name>".
	pythonGitCommits map[string]string
}

// report keeps what k's script printed in m (fetched or installed).
func (c *contentState) report(m *map[string]string, k contentKind, out string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k.option()] = out
}

// imageContent is the `content` record of image.json.
type imageContent struct {
	Git       map[string]git.Record       `json:"git,omitempty"`       // by destination
	Downloads map[string]downloads.Record `json:"downloads,omitempty"` // by destination
	Python    map[string][]string         `json:"python,omitempty"`    // venv path or interpreter -> pins
	RPMs      map[string]rpms.Record      `json:"rpms,omitempty"`      // by package name
	// pinned Grafana plugins by id
	GrafanaPlugins map[string]imageDownload `json:"grafana_plugins,omitempty"`
	System         *imageSystem             `json:"system,omitempty"`
	// Containers are the images, in the order configured.
	Containers []imageContainer `json:"containers,omitempty"`
	// GrafanaDashboards by file name in /var/lib/grafana/dashboards.
	GrafanaDashboards map[string]dashboards.Record `json:"grafana_dashboards,omitempty"`
	// PythonGit are the git requirements by "<env> <name>": repository,
	// ref and the commit installed
	PythonGit map[string]imageGit `json:"python_git,omitempty"`
}

// contentSource is who fetches URL-based content: content_source, or
// binary_source when unset.
func (c *Config) contentSource() string {
	if c.ContentSource != "" {
		return c.ContentSource
	}
	return c.BinarySource
}

// hasContent reports whether any content kind is configured.
func (c *ContentOptions) hasContent() bool {
	return len(c.GitCheckouts)+len(c.Downloads)+len(c.PythonEnvs)+len(c.GrafanaDashboards) > 0
}

// contentWarnings are said at the start of a run.
func (c *ContentOptions) contentWarnings() []string {
	return append(append(kindFetchPlan(kindGit, c).Warnings, kindFetchPlan(kindDownloads, c).Warnings...), pythonWarnings(c.PythonEnvs)...)
}

// stepFetchContent stages and verifies every URL-based content item in
// the work dir, and checks owners that this run does not create exist.
func stepFetchContent(ctx context.Context, s *state) error {
	c, p := s.cfg, s.plan
	s.say("content: fetching and verifying (content_source = " + c.contentSource() + ")")
	for _, w := range p.contentWarnings() {
		s.say("WARNING: " + w)
	}
	s.content = contentState{}
	sc := newScript("content")
	created := map[string]bool{}
	for _, u := range p.users {
		created[u.Name] = true
		if u.Group != "" {
			created[u.Group] = true
		}
	}
	for _, o := range contentOwners(&p.ContentOptions) {
		if !created[o[1]] {
			sc.call("fatimage_check_owner", o[0], o[1], o[2])
		}
	}
	// in the order of the script before the kinds moved: downloads,
	// git, python, dashboards
	var checks []func(string) error
	for _, k := range contentStepKinds {
		if pythonGoesBefore(k) {
			if err := s.fetchPython(ctx, sc); err != nil {
				return err
			}
		}
		check, err := s.fetchKind(ctx, sc, k, nil)
		if err != nil {
			return err
		}
		checks = append(checks, check)
	}
	out, err := s.runScript(ctx, sc)
	if err != nil {
		return err
	}
	for i, k := range contentStepKinds {
		s.content.report(&s.content.fetched, k, out)
		if checks[i] != nil {
			if err := checks[i](out); err != nil {
				return err
			}
		}
	}
	return nil
}

// stepInstallContent puts the verified content in place.
func stepInstallContent(ctx context.Context, s *state) error {
	c, p := s.cfg, s.plan
	s.say("content (git checkouts, downloads, python envs, grafana dashboards)")
	// in the order of the script before the kinds moved: downloads,
	// git, python, dashboards
	sc := newScript("content")
	for _, k := range contentStepKinds {
		if pythonGoesBefore(k) {
			sc.add(scriptInstallPython(p.PythonEnvs, c.contentSource(), s.workDir))
		}
		if err := installKind(s, sc, k); err != nil {
			return err
		}
	}
	out, err := s.runScript(ctx, sc)
	if err != nil {
		return err
	}
	for _, k := range contentStepKinds {
		s.content.report(&s.content.installed, k, out)
		if err := s.recordKind(k); err != nil {
			return err
		}
	}
	s.content.pythonGitCommits, err = parsePythonGitCommits(out, p.PythonEnvs)
	return err
}

// pythonGoesBefore reports whether python_envs' older code runs before
// k's in the content steps: their order before the kinds moved.
func pythonGoesBefore(k contentKind) bool { return k.option() == kindDashboards.option() }

// parseReports and requireReports are internal/content's Reports and
// RequireReports, for the kinds not moved behind content.Kind yet.
func parseReports(out, marker, field string, n int, ok func(string) bool) []string {
	return content.Reports(out, marker, field, n, ok)
}

func requireReports(vals []string, field, why string) error {
	return content.RequireReports(vals, field, why)
}

// imageContentRecord is image.json's `content`, nil without content.
func (s *state) imageContentRecord() *imageContent {
	c, p := s.cfg, s.plan
	pins, _ := p.grafanaPins()
	if !p.hasContent() && !p.hasSystem() && !p.hasContainers() && len(p.RPMURLs)+len(pins) == 0 {
		return nil
	}
	r := &imageContent{System: s.imageSystemRecord(), Containers: s.imageContainersRecord(), PythonGit: s.imagePythonGitRecord()}
	for _, g := range pins {
		if r.GrafanaPlugins == nil {
			r.GrafanaPlugins = map[string]imageDownload{}
		}
		r.GrafanaPlugins[g.ID] = imageDownload{URL: g.url(c.grafanaPluginURL()), SHA256: g.SHA256}
	}
	for _, e := range p.PythonEnvs {
		if r.Python == nil {
			r.Python = map[string][]string{}
		}
		lines, _ := e.requirementLines()
		for i, l := range lines {
			lines[i] = requirementPin(l) // the pin, without hashes
		}
		r.Python[e.label()] = lines
	}
	r.Downloads, _ = s.content.records[kindDownloads.option()].(map[string]downloads.Record)
	r.Git, _ = s.content.records[kindGit.option()].(map[string]git.Record)
	r.RPMs, _ = s.content.records[kindRPMs.option()].(map[string]rpms.Record)
	r.GrafanaDashboards, _ = s.content.records[kindDashboards.option()].(map[string]dashboards.Record)
	return r
}

// contentOwners lists [what, user, group] for every item with an owner.
func contentOwners(c *ContentOptions) [][3]string {
	var out [][3]string
	for _, k := range []contentKind{kindGit, kindDownloads} {
		for _, o := range kindFetchPlan(k, c).Owners {
			out = append(out, [3]string{o.What, o.User, o.Group})
		}
	}
	for i, e := range c.PythonEnvs {
		u, grp := splitOwner(e.Owner)
		out = append(out, [3]string{fmt.Sprintf("python_envs[%d]", i), u, grp})
	}
	for _, o := range kindFetchPlan(kindDashboards, c).Owners {
		out = append(out, [3]string{o.What, o.User, o.Group})
	}
	return out
}

// splitOwner is content.SplitOwner, for the kinds not moved behind
// content.Kind yet.
func splitOwner(o string) (string, string) { return content.SplitOwner(o) }

// imageGit is a repository and the commit installed in image.json, as
// the git_checkouts kind records its items.
type imageGit = git.Record

// imageDownload is a file fetched by URL in image.json, as the
// downloads kind records its items.
type imageDownload = downloads.Record

// imageSystem is the system settings' record in image.json.
type imageSystem struct {
	Units      map[string]string `json:"units,omitempty"` // name -> state
	Files      []string          `json:"files,omitempty"`
	KernelArgs []string          `json:"kernel_args,omitempty"`
}
