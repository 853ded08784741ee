package fatimage

import (
	"context"
	_ "embed"
	"fmt"
	"net/url"
	"strings"
)

// Content beyond RPMs (issue #14). Each kind has its config struct,
// validation and scripts in its own content_<kind>.go and content/<kind>.sh;
// this file holds the two hooks Provision calls: fetch and verify every
// URL-based kind before any package work (so a bad checksum or pin
// changes nothing), and put everything in place after the packages.

//go:embed content/common.sh
var contentCommonSh string

// contentState is what one run learnt while fetching: the commit each
// git checkout resolved to, for the install and image.json.
type contentState struct {
	gitCommits []string
}

// imageContent is the `content` record of image.json.
type imageContent struct {
	Git       map[string]imageGit      `json:"git,omitempty"`       // by destination
	Downloads map[string]imageDownload `json:"downloads,omitempty"` // by destination
	Python    map[string][]string      `json:"python,omitempty"`    // venv path or interpreter -> pins
	System    *imageSystem             `json:"system,omitempty"`
}

// contentSource is who fetches URL-based content: content_source, or
// binary_source when unset.
func (c *Config) contentSource() string {
	if c.ContentSource != "" {
		return c.ContentSource
	}
	return c.BinarySource
}

func validateContentSource(s string) []error {
	switch s {
	case "", "vm", "host":
		return nil
	}
	return []error{fmt.Errorf("content_source: %q is not one of vm, host", s)}
}

// hasContent reports whether any content kind is configured.
func (c *Config) hasContent() bool {
	return len(c.GitCheckouts)+len(c.Downloads)+len(c.PythonEnvs) > 0
}

// contentWarnings are said at the start of a run.
func (c *Config) contentWarnings() []string {
	return gitWarnings(c.GitCheckouts)
}

// stepFetchContent stages and verifies every URL-based content item in
// the work dir, and checks owners that this run does not create exist.
func (p *Provisioner) stepFetchContent(ctx context.Context) error {
	c := &p.config
	if !c.hasContent() {
		return nil
	}
	p.content = contentState{}
	var s strings.Builder
	s.WriteString(contentCommonSh)
	s.WriteString(contentGitSh)
	s.WriteString(contentDownloadSh)
	created := map[string]bool{}
	for _, u := range c.users {
		created[u.Name] = true
		if u.Group != "" {
			created[u.Group] = true
		}
	}
	for _, o := range contentOwners(c) {
		if !created[o[1]] {
			fmt.Fprintf(&s, "fatimage_check_owner %s %s %s\n", shQuote(o[0]), shQuote(o[1]), shQuote(o[2]))
		}
	}
	if err := p.fetchDownloads(ctx, &s); err != nil {
		return err
	}
	if err := p.fetchGit(ctx, &s); err != nil {
		return err
	}
	if err := p.fetchPython(ctx, &s); err != nil {
		return err
	}
	out, err := p.runScript(ctx, "content-fetch", s.String())
	if err != nil {
		return err
	}
	p.content.gitCommits = parseGitCommits(out, len(c.GitCheckouts))
	for i, commit := range p.content.gitCommits {
		if commit == "" {
			return fmt.Errorf("git_checkouts[%d]: the fetch did not report a commit", i)
		}
	}
	return nil
}

// stepInstallContent puts the verified content in place.
func (p *Provisioner) stepInstallContent(ctx context.Context) error {
	c := &p.config
	if !c.hasContent() {
		return nil
	}
	var s strings.Builder
	s.WriteString(contentCommonSh)
	s.WriteString(contentGitSh)
	s.WriteString(contentDownloadSh)
	s.WriteString(scriptInstallDownloads(c.Downloads, p.workDir))
	s.WriteString(scriptInstallGit(c.GitCheckouts, p.content.gitCommits, p.workDir))
	s.WriteString(contentPythonSh)
	s.WriteString(scriptInstallPython(c, p.workDir))
	_, err := p.runScript(ctx, "content", s.String())
	return err
}

// imageContentRecord is image.json's `content`, nil without content.
func (p *Provisioner) imageContentRecord() *imageContent {
	c := &p.config
	if !c.hasContent() && !c.hasSystem() {
		return nil
	}
	r := &imageContent{System: p.imageSystemRecord()}
	for i, g := range c.GitCheckouts {
		if r.Git == nil {
			r.Git = map[string]imageGit{}
		}
		commit := ""
		if i < len(p.content.gitCommits) {
			commit = p.content.gitCommits[i]
		}
		r.Git[g.Destination] = imageGit{Repo: g.Repo, Ref: g.ref(), Commit: commit}
	}
	for _, e := range c.PythonEnvs {
		if r.Python == nil {
			r.Python = map[string][]string{}
		}
		lines, _ := e.requirementLines()
		for i, l := range lines {
			lines[i] = strings.Fields(l)[0] // the pin, without hashes
		}
		r.Python[e.label()] = lines
	}
	for _, d := range c.Downloads {
		if r.Downloads == nil {
			r.Downloads = map[string]imageDownload{}
		}
		r.Downloads[d.Destination] = imageDownload{URL: d.URL, SHA256: strings.ToLower(d.SHA256)}
	}
	return r
}

// contentOwners lists [what, user, group] for every item with an owner.
func contentOwners(c *Config) [][3]string {
	var out [][3]string
	for i, g := range c.GitCheckouts {
		u, grp := splitOwner(g.Owner)
		out = append(out, [3]string{fmt.Sprintf("git_checkouts[%d]", i), u, grp})
	}
	for i, d := range c.Downloads {
		u, grp := splitOwner(d.Owner)
		out = append(out, [3]string{fmt.Sprintf("downloads[%d]", i), u, grp})
	}
	for i, e := range c.PythonEnvs {
		u, grp := splitOwner(e.Owner)
		out = append(out, [3]string{fmt.Sprintf("python_envs[%d]", i), u, grp})
	}
	return out
}

// splitOwner turns "user" or "user:group" into user and group; empty is
// root:root, a user alone has the group of its name.
func splitOwner(o string) (string, string) {
	if o == "" {
		return "root", "root"
	}
	u, g, _ := strings.Cut(o, ":")
	if g == "" {
		g = u
	}
	return u, g
}

// validOwner reports whether o is "", "user" or "user:group".
func validOwner(o string) bool {
	if o == "" {
		return true
	}
	u, g, hasGroup := strings.Cut(o, ":")
	return reName.MatchString(u) && (!hasGroup || reName.MatchString(g))
}

// itemErrs collects the errors of one list item, each prefixed with
// "<field>[i]: ".
func itemErrs(errs *[]error, field string, i int) func(string, ...any) {
	return func(f string, a ...any) {
		*errs = append(*errs, fmt.Errorf("%s[%d]: "+f, append([]any{field, i}, a...)...))
	}
}

// checkHTTPURL reports what is wrong with an item's http(s) URL field,
// "" when nothing.
func checkHTTPURL(field, s string) string {
	if s == "" {
		return field + " is required"
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("%s %q must be an http(s) URL", field, s)
	}
	if u.User != nil {
		return field + " must not carry credentials in the URL"
	}
	return ""
}

// validateContent checks every content kind.
func (c *Config) validateContent() []error {
	errs := validateContentSource(c.ContentSource)
	errs = append(errs, validateGitCheckouts(c.GitCheckouts)...)
	errs = append(errs, validateDownloads(c.Downloads)...)
	errs = append(errs, validatePythonEnvs(c.PythonEnvs)...)
	errs = append(errs, validateSystem(c)...)
	return append(errs, validateDestinations(c)...)
}

// validateDestinations refuses two items writing the same path.
func validateDestinations(c *Config) []error {
	var errs []error
	seen := map[string]string{}
	claim := func(what, dst string) {
		if dst == "" {
			return
		}
		if o, ok := seen[dst]; ok {
			errs = append(errs, fmt.Errorf("%s: destination %s is also %s's", what, dst, o))
			return
		}
		seen[dst] = what
	}
	for i, g := range c.GitCheckouts {
		claim(fmt.Sprintf("git_checkouts[%d]", i), g.Destination)
	}
	for i, d := range c.Downloads {
		claim(fmt.Sprintf("downloads[%d]", i), d.Destination)
	}
	for i, e := range c.PythonEnvs {
		if !e.System {
			claim(fmt.Sprintf("python_envs[%d]", i), e.Path)
		}
	}
	return errs
}

// imageGit is a checkout in image.json.
type imageGit struct {
	Repo   string `json:"repo"`
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
}

// imageDownload is a download in image.json.
type imageDownload struct {
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
}

// systemFile is one file a system setting writes.
type systemFile struct {
	Path    string
	Content string
}

// imageSystem is the system settings' record in image.json.
type imageSystem struct {
	Units      map[string]string `json:"units,omitempty"` // name -> state
	Files      []string          `json:"files,omitempty"`
	KernelArgs []string          `json:"kernel_args,omitempty"`
}
