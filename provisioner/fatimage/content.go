package fatimage

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/downloads"
)

// Content beyond RPMs (issue #14). The kinds fetched before any package
// work (so a bad checksum or pin changes nothing) are packages of
// internal/content (their shells use scripts/content.sh's helpers); this
// file holds their two steps, content-fetch and content, and image.json's
// content record.

// contentState is what one run learnt: the kinds' reports and records.
type contentState struct {
	// fetched and installed are what the content kinds' fetch and
	// install scripts printed, by option (content.Env); records their
	// entries in image.json's content, by key.
	fetched, installed map[string]string
	records            map[string]any
}

// report keeps what k's script printed in m (fetched or installed).
func (c *contentState) report(m *map[string]string, k contentKind, out string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k.option()] = out
}

// imageContent is the `content` record of image.json: the entries of
// the kinds of internal/content (content.Recorder: git, downloads,
// python, python_git, rpms, grafana_dashboards, containers) and those of
// the provisioner's own.
type imageContent struct {
	// pinned Grafana plugins by id
	GrafanaPlugins map[string]imageDownload `json:"grafana_plugins,omitempty"`
	System         *imageSystem             `json:"system,omitempty"`
	// kinds are the content kinds' entries, by key.
	kinds map[string]any
}

// MarshalJSON writes the fields and the kinds' entries as one object.
func (c imageContent) MarshalJSON() ([]byte, error) {
	type fields imageContent // without this method
	raw, err := json.Marshal(fields(c))
	if err != nil || len(c.kinds) == 0 {
		return raw, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for k, v := range c.kinds {
		m[k] = v
	}
	return json.Marshal(m)
}

// contentSource is who fetches URL-based content: content_source, or
// binary_source when unset.
func (c *Config) contentSource() string {
	if c.ContentSource != "" {
		return c.ContentSource
	}
	return c.BinarySource
}

// hasContent reports whether the plan holds items of a kind of the
// content steps.
func (p *plan) hasContent() bool {
	return slices.ContainsFunc(contentStepKinds, func(k contentKind) bool { return k.has(p) })
}

// contentWarnings are said at the start of a run.
func (c *ContentOptions) contentWarnings() []string {
	var out []string
	for _, k := range contentStepKinds {
		out = append(out, kindFetchPlan(k, c).Warnings...)
	}
	return out
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
	for _, o := range p.ownersToCheck() {
		sc.call("fatimage_check_owner", o[0], o[1], o[2])
	}
	var fetches []*content.Fetch
	for _, k := range contentStepKinds {
		f, err := s.fetchKind(ctx, sc, k, nil)
		if err != nil {
			return err
		}
		fetches = append(fetches, f)
	}
	out, err := s.runScript(ctx, sc)
	if err != nil {
		return err
	}
	for i, k := range contentStepKinds {
		if err := s.fetched(k, fetches[i], out); err != nil {
			return err
		}
	}
	return nil
}

// stepInstallContent puts the verified content in place.
func stepInstallContent(ctx context.Context, s *state) error {
	s.say("content (git checkouts, downloads, python envs, grafana dashboards)")
	sc := newScript("content")
	for _, k := range contentStepKinds {
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
	return nil
}

// imageContentRecord is image.json's `content`, nil without content.
func (s *state) imageContentRecord() *imageContent {
	c, p := s.cfg, s.plan
	pins, _ := p.grafanaPins()
	if !p.hasContent() && !p.hasSystem() && !kindContainers.has(p) && len(p.RPMURLs)+len(pins) == 0 {
		return nil
	}
	r := &imageContent{System: s.imageSystemRecord()}
	for _, g := range pins {
		if r.GrafanaPlugins == nil {
			r.GrafanaPlugins = map[string]imageDownload{}
		}
		r.GrafanaPlugins[g.ID] = imageDownload{URL: g.url(c.grafanaPluginURL()), SHA256: g.SHA256}
	}
	r.kinds = s.content.records
	return r
}

// ownersToCheck are the content items' owners ([what, user, group]) that
// must exist before any package work: not those the run makes (its
// users), nor those the site's appliance leaves to the packages (their
// install fails naming the owner if nothing made it).
func (p *plan) ownersToCheck() [][3]string {
	made := map[string]bool{}
	for _, u := range p.users {
		made[u.Name] = true
		if u.Group != "" {
			made[u.Group] = true
		}
	}
	for _, n := range p.sets.packageUsers {
		made[n] = true
	}
	var out [][3]string
	for _, o := range contentOwners(&p.ContentOptions) {
		if !made[o[1]] {
			out = append(out, o)
		}
	}
	return out
}

// contentOwners lists [what, user, group] for every item with an owner.
func contentOwners(c *ContentOptions) [][3]string {
	var out [][3]string
	for _, k := range contentStepKinds {
		for _, o := range kindFetchPlan(k, c).Owners {
			out = append(out, [3]string{o.What, o.User, o.Group})
		}
	}
	return out
}

// imageDownload is a file fetched by URL in image.json, as the
// downloads kind records its items.
type imageDownload = downloads.Record

// imageSystem is the system settings' record in image.json.
type imageSystem struct {
	Units      map[string]string `json:"units,omitempty"` // name -> state
	Files      []string          `json:"files,omitempty"`
	KernelArgs []string          `json:"kernel_args,omitempty"`
}
