//go:generate packer-sdc mapstructure-to-hcl2 -type Config,RepoConfig,SitePulpConfig,DatasourceOutput,Repo
//go:generate packer-sdc struct-markdown

package ark

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/hashicorp/packer-plugin-sdk/packer"
	"github.com/hashicorp/packer-plugin-sdk/template/config"

	"github.com/stackhpc/packer-plugin-fatimage/internal/pulp"
	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
	"github.com/stackhpc/packer-plugin-fatimage/internal/timestamps"
)

// Defaults for optional settings.
const (
	DefaultContentURL  = "https://ark.stackhpc.com/pulp/content"
	DefaultTimeout     = 30 * time.Second
	DefaultConcurrency = 16
	// MaxConcurrency bounds `concurrency`: each one is a connection and a
	// goroutine, and Ark does not answer faster to more.
	MaxConcurrency = 64
)

// Config is the `fatimage-ark` data source's configuration.
type Config struct {
	// Base URL of the Pulp content app. Defaults to
	// `https://ark.stackhpc.com/pulp/content`; point it at a site's own Pulp
	// mirror to resolve there. Must not carry credentials.
	ContentURL string `mapstructure:"content_url"`
	// User name sent as HTTP Basic auth. Defaults to the `ARK_USERNAME`
	// environment variable.
	Username string `mapstructure:"username"`
	// Password sent as HTTP Basic auth. Sensitive: it never appears in logs,
	// errors or outputs. Defaults to the `ARK_PASSWORD` environment variable.
	Password string `mapstructure:"password"`
	// PEM file of extra CA certificates trusted for the content URL.
	CAFile string `mapstructure:"ca_file"`
	// Skip TLS certificate verification. Only for testing.
	InsecureSkipVerify bool `mapstructure:"insecure_skip_verify"`
	// Time limit for each HTTP request, as a duration such as `30s` (the
	// default). Timed-out requests are retried with backoff.
	Timeout time.Duration `mapstructure:"timeout"`
	// How many repositories are resolved at once, 1 to 64. Defaults to 16.
	Concurrency int `mapstructure:"concurrency"`
	// Rocky Linux version the repositories are wanted for: the source
	// image's, for example `"9.8"` (what the appliance's RL9 builds use
	// today). Each repository's entry is looked up by this exact version
	// first, then by its major version (`"9"`), as the appliance does with
	// the build VM's version. Each repository of the `repos` output
	// carries it, and the `fatimage` provisioner checks the build VM's
	// `/etc/os-release` against it.
	OSVersion string `mapstructure:"os_version" required:"true"`
	// Path to an appliance `dnf_repo_timestamps.yml` (the
	// `dnf_repos_default` mapping). Its entries are the repositories to
	// resolve; `repo` blocks add to or override them. Not with
	// `appliance_dir`, which names the checkout's own.
	TimestampsFile string `mapstructure:"timestamps_file"`
	// The site's checkout of the Slurm appliance (the directory holding
	// `ansible/` and `environments/`): its pins,
	// `environments/common/inventory/group_vars/all/dnf_repo_timestamps.yml`,
	// are the timestamps file, as the appliance's own build reads them.
	ApplianceDir string `mapstructure:"appliance_dir"`
	// Repositories given in the template. A block overrides the timestamps
	// file's entry of the same name, field by field.
	Repos []RepoConfig `mapstructure:"repo"`
	// Resolve only these repositories (by name).
	Only []string `mapstructure:"only"`
	// Leave these repositories out (by name).
	Skip []string `mapstructure:"skip"`
	// How snapshots are chosen: `pinned` (the given timestamps, each
	// checked to exist: the appliance's snapshots), `latest` (the newest
	// snapshot of each repository) or `not_after` (the newest snapshot at
	// or before `not_after`). Defaults to `pinned` with `timestamps_file`
	// or `appliance_dir`, as the appliance builds from its pins; to
	// `latest` with `repo` blocks only.
	Mode string `mapstructure:"mode"`
	// Cut-off for `mode = "not_after"`: a timestamp such as
	// `20250101T000000` or an RFC 3339 time such as `2025-01-01T00:00:00Z`.
	NotAfter string `mapstructure:"not_after"`
	// Require each chosen snapshot's `repodata/repomd.xml` to answer 200
	// with the given credentials. When choosing the latest snapshot (or the
	// latest before a cut-off), one answering 403 or 404 is passed over for
	// the next older one, with a warning naming it; at most the 10 newest
	// are tried, as each try sends the credentials. Defaults to true.
	Verify *bool `mapstructure:"verify"`
	// A site's own Pulp to mirror the chosen snapshots into before the
	// build, for sites whose build VMs cannot reach Ark. The outputs then
	// point at the site Pulp. See `site_pulp` below.
	SitePulp *SitePulpConfig `mapstructure:"site_pulp"`

	mode     pulp.Mode
	notAfter time.Time
	file     *timestamps.File
	plan     []task
}

// RepoConfig is a `repo` block: a repository given in the template.
type RepoConfig struct {
	// Repository name, the key used in outputs and by `only` and `skip`.
	Name string `mapstructure:"name" required:"true"`
	// Path of the repository below the content URL, without the timestamp,
	// for example `rocky/9.6/BaseOS/x86_64/os`: relative, without `.` or
	// `..` segments, query, fragment, `%` escapes, spaces or control
	// characters.
	Path string `mapstructure:"path"`
	// Name of the file in `/etc/yum.repos.d` (without `.repo`) the
	// repository belongs in. Defaults to the name.
	RepoFile string `mapstructure:"repo_file"`
	// Section name inside the repo file. Defaults to the name.
	RepoName string `mapstructure:"repo_name"`
	// Whether dnf checks package signatures. Defaults to true.
	GPGCheck *bool `mapstructure:"gpgcheck"`
	// Content URL for this repository only.
	ContentURL string `mapstructure:"content_url"`
	// Snapshot timestamp, used by `mode = "pinned"`.
	Timestamp string `mapstructure:"timestamp"`
}

// SitePulpConfig is the `site_pulp` block: a site's own Pulp (pulpcore 3
// with pulp_rpm) that the chosen snapshots are synced into.
type SitePulpConfig struct {
	// Base URL of the site Pulp's REST API, the part before
	// `/pulp/api/v3/`, for example `http://pulp.site:8080`.
	URL string `mapstructure:"url" required:"true"`
	// API user name. Defaults to the `SITE_PULP_USERNAME` environment
	// variable.
	Username string `mapstructure:"username"`
	// API password. Sensitive: it never appears in logs, errors or
	// outputs. Defaults to the `SITE_PULP_PASSWORD` environment variable.
	Password string `mapstructure:"password"`
	// Base URL of the site Pulp's content app, which the outputs' baseurls
	// point at. Defaults to `<url>/pulp/content`.
	ContentURL string `mapstructure:"content_url"`
	// Download policy of the remotes made: `on_demand` (the default; the
	// site fetches packages from Ark when first asked for them) or
	// `immediate` (the sync downloads every package).
	Policy string `mapstructure:"policy"`
	// PEM file of extra CA certificates trusted for the site Pulp.
	CAFile string `mapstructure:"ca_file"`
	// Skip TLS certificate verification of the site Pulp. Only for testing.
	InsecureSkipVerify bool `mapstructure:"insecure_skip_verify"`
	// Time limit for each HTTP request to the site Pulp, such as `30s`
	// (the default). Timed-out requests are retried with backoff.
	Timeout time.Duration `mapstructure:"timeout"`
	// How long one Pulp task (a sync, a publication) may run, such as
	// `1h` (the default). A task still running then is cancelled and the
	// build fails.
	TaskTimeout time.Duration `mapstructure:"task_timeout"`
}

// Site Pulp defaults.
const (
	DefaultSitePolicy      = "on_demand"
	DefaultSiteTaskTimeout = time.Hour
)

// prepare fills the defaults and reports every problem through add. It
// makes no network call.
func (s *SitePulpConfig) prepare(add func(string, ...any)) {
	if s.Username == "" {
		s.Username = os.Getenv("SITE_PULP_USERNAME")
	}
	if s.Password == "" {
		s.Password = os.Getenv("SITE_PULP_PASSWORD")
	}
	redact.AddBasic(s.Username, s.Password)
	if s.Policy == "" {
		s.Policy = DefaultSitePolicy
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.TaskTimeout == 0 {
		s.TaskTimeout = DefaultSiteTaskTimeout
	}
	if s.URL == "" {
		add("site_pulp.url: required, the site Pulp's API base such as \"http://pulp.site:8080\"")
	} else if err := checkContentURL(s.URL); err != nil {
		add("site_pulp.url: %v", err)
	} else if strings.Contains(s.URL, "/pulp/api") {
		add("site_pulp.url: %q must be the base before /pulp/api/v3/, for example %q", s.URL, s.URL[:strings.Index(s.URL, "/pulp/api")])
	} else if s.ContentURL == "" {
		s.ContentURL = strings.TrimSuffix(s.URL, "/") + "/pulp/content"
	}
	if s.ContentURL != "" {
		if err := checkContentURL(s.ContentURL); err != nil {
			add("site_pulp.content_url: %v", err)
		}
	}
	if s.Username == "" || s.Password == "" {
		add("site_pulp.username/site_pulp.password: the site Pulp's API needs credentials; set username and password in site_pulp (or SITE_PULP_USERNAME and SITE_PULP_PASSWORD)")
	}
	if s.Policy != "on_demand" && s.Policy != "immediate" {
		add("site_pulp.policy: %q is not one of \"on_demand\", \"immediate\"", s.Policy)
	}
	checkConnection(add, "site_pulp.", s.Timeout, s.CAFile)
	if s.TaskTimeout < 0 {
		add("site_pulp.task_timeout: must be positive, got %s", s.TaskTimeout)
	}
}

// checkConnection checks the settings every server's block shares.
func checkConnection(add func(string, ...any), prefix string, timeout time.Duration, caFile string) {
	if timeout < 0 {
		add("%stimeout: must be positive, got %s", prefix, timeout)
	}
	if caFile != "" {
		if _, err := os.Stat(caFile); err != nil {
			add("%sca_file: %v", prefix, err)
		}
	}
}

// Prepare checks the whole configuration, collecting every problem, and
// plans the work. It reads the timestamps file but makes no network call.
func (c *Config) Prepare() error {
	var errs *packer.MultiError
	add := func(format string, args ...any) { errs = packer.MultiErrorAppend(errs, fmt.Errorf(format, args...)) }

	c.setDefaults()
	c.checkSource(add)
	c.findTimestamps(add)
	c.prepareMode(add)
	if c.SitePulp != nil {
		c.SitePulp.prepare(add)
	}
	c.readTimestamps(add)

	// planning reads the checked settings, so it runs only when all passed
	if errs == nil {
		c.planTasks(add)
	}
	if errs != nil && len(errs.Errors) > 0 {
		return errs
	}
	return nil
}

// setDefaults fills the optional settings left unset, credentials from the
// environment; they are registered with redact before anything can log them.
func (c *Config) setDefaults() {
	if c.ContentURL == "" {
		c.ContentURL = DefaultContentURL
	}
	if c.Username == "" {
		c.Username = os.Getenv("ARK_USERNAME")
	}
	if c.Password == "" {
		c.Password = os.Getenv("ARK_PASSWORD")
	}
	redact.AddBasic(c.Username, c.Password)
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Verify == nil {
		c.Verify = config.TrileanFromBool(true).ToBoolPointer()
	}
}

// checkSource checks where and how the repositories are fetched: the
// content URL, its credentials and connection, and the OS version.
func (c *Config) checkSource(add func(string, ...any)) {
	if pulp.NeedsCredentials(c.ContentURL) && (c.Username == "" || c.Password == "") {
		add("username/password: %s needs credentials; set username and password (or ARK_USERNAME and ARK_PASSWORD)", c.ContentURL)
	}
	if err := checkContentURL(c.ContentURL); err != nil {
		add("content_url: %v", err)
	}
	checkConnection(add, "", c.Timeout, c.CAFile)
	if c.Concurrency < 0 {
		add("concurrency: must be at least 1, got %d", c.Concurrency)
	} else if c.Concurrency > MaxConcurrency {
		add("concurrency: %d is more than %d, the most repositories resolved at once", c.Concurrency, MaxConcurrency)
	}
	if c.OSVersion == "" {
		add(`os_version: required, for example "9.6"`)
	} else if strings.ContainsAny(c.OSVersion, " /") {
		add("os_version: %q is not a version such as \"9.6\"", c.OSVersion)
	}
}

// ApplianceTimestamps is where an appliance checkout keeps its pins: the
// common inventory's group_vars, which every environment's inventory
// starts from.
const ApplianceTimestamps = "environments/common/inventory/group_vars/all/dnf_repo_timestamps.yml"

// findTimestamps makes appliance_dir's pins the timestamps file.
func (c *Config) findTimestamps(add func(string, ...any)) {
	if c.ApplianceDir == "" {
		return
	}
	if c.TimestampsFile != "" {
		add("timestamps_file: not with appliance_dir, whose %s is the timestamps file; give one of them", ApplianceTimestamps)
		return
	}
	f := filepath.Join(c.ApplianceDir, filepath.FromSlash(ApplianceTimestamps))
	if _, err := os.Stat(f); err != nil {
		add("appliance_dir: %s has no %s: give the appliance checkout, the directory holding ansible/ and environments/ (%v)", c.ApplianceDir, ApplianceTimestamps, err)
		return
	}
	c.TimestampsFile = f
}

// prepareMode sets the snapshot selection mode and, for not_after, parses
// the cut-off once here so resolving never meets a bad one. A timestamps
// file's pins are what the appliance builds from, so they are the default.
func (c *Config) prepareMode(add func(string, ...any)) {
	c.mode = pulp.Mode(c.Mode)
	switch {
	case c.Mode != "":
	case c.TimestampsFile != "":
		c.mode = pulp.ModePinned
	default:
		c.mode = pulp.ModeLatest
	}
	switch c.mode {
	case pulp.ModeLatest, pulp.ModePinned:
		if c.NotAfter != "" {
			add("not_after: only used with mode = \"not_after\", but mode is %q", c.mode)
		}
	case pulp.ModeNotAfter:
		if c.NotAfter == "" {
			add(`not_after: required with mode = "not_after", for example "20250101T000000" or "2025-01-01T00:00:00Z"`)
		} else if t, err := pulp.ParseCutoff(c.NotAfter); err != nil {
			add("not_after: %v", err)
		} else {
			c.notAfter = t
		}
	default:
		add("mode: %q is not one of %s", c.Mode, strings.Join(quoteAll(pulp.Modes), ", "))
	}
}

// readTimestamps loads the timestamps file if one is given; without one
// the plan starts from an empty file, so planning has one path.
func (c *Config) readTimestamps(add func(string, ...any)) {
	if c.TimestampsFile != "" {
		data, err := os.ReadFile(c.TimestampsFile)
		if err != nil {
			add("timestamps_file: %v", err)
		} else if c.file, err = timestamps.Parse(data); err != nil {
			add("timestamps_file %s: %v", c.TimestampsFile, err)
		}
	}
	if c.file == nil {
		c.file = timestamps.New()
	}
}

// checkContentURL rejects URLs that are not absolute http(s) or that embed
// credentials, which would then leak into baseurls and messages.
func checkContentURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%q must be an absolute http:// or https:// URL", u.Redacted())
	}
	if u.User != nil {
		return fmt.Errorf("%q must not contain credentials; use username and password", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q must not have a query or fragment", u.Redacted())
	}
	return nil
}

// checkRepoPath rejects a repository path that is not a plain relative
// path below the content URL: it is joined into request URLs and baseurls,
// where "..", a query, a fragment or a control character would point them
// elsewhere.
func checkRepoPath(p string) error {
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("%q is absolute; give the path below the content URL, such as \"rocky/9.6/BaseOS/x86_64/os\"", p)
	}
	for _, r := range p {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return fmt.Errorf("%q contains a control or space character", p)
		}
	}
	if i := strings.IndexAny(p, "?#%\\"); i >= 0 {
		return fmt.Errorf("%q contains %q: a repository path has no query, fragment, escapes or backslashes", p, p[i:i+1])
	}
	for _, seg := range strings.Split(strings.TrimSuffix(p, "/"), "/") {
		switch seg {
		case "":
			return fmt.Errorf("%q has an empty segment", p)
		case ".", "..":
			return fmt.Errorf("%q has a %q segment", p, seg)
		}
	}
	return nil
}

func quoteAll[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}
