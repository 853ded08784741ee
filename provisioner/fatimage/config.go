//go:generate packer-sdc mapstructure-to-hcl2 -type Config,GPGKey,User,File,Binary,GitCheckout,Download,SystemdUnit,Sysctl,ModprobeBlacklist,ConfigFile,PythonEnv
//go:generate packer-sdc struct-markdown

package fatimage

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/mitchellh/mapstructure"

	"github.com/hashicorp/packer-plugin-sdk/common"
	"github.com/hashicorp/packer-plugin-sdk/packer"
	"github.com/hashicorp/packer-plugin-sdk/template/config"
	"github.com/hashicorp/packer-plugin-sdk/template/interpolate"

	"github.com/stackhpc/packer-plugin-fatimage/internal/pulp"
)

// Repo is one repository to write into /etc/yum.repos.d; the `repos`
// output of the `fatimage-ark` data source has this shape.
type Repo struct {
	// Repository name (informational).
	Name string `mapstructure:"name"`
	// File in /etc/yum.repos.d, without `.repo`.
	RepoFile string `mapstructure:"repo_file"`
	// Section name in the repo file.
	RepoName string `mapstructure:"repo_name"`
	// Full snapshot URL for dnf's baseurl.
	BaseURL string `mapstructure:"baseurl"`
	// Repository path below the content URL (informational).
	Path string `mapstructure:"path"`
	// Snapshot timestamp (recorded in image.json).
	Timestamp string `mapstructure:"timestamp"`
	// Whether dnf checks package signatures.
	GPGCheck bool `mapstructure:"gpgcheck"`
	// Whether the section is enabled during the build. Defaults to true.
	Enabled *bool `mapstructure:"enabled"`
	// dnf priority; 0 means not written.
	Priority int `mapstructure:"priority"`
	// Write `module_hotfixes = 1`.
	ModuleHotfixes bool `mapstructure:"module_hotfixes"`
	// The data source's note that newer snapshots were passed over;
	// shown in the build output.
	Warning string `mapstructure:"warning"`
	// Any other key of a `repos` element is written as an extra
	// `key = value` line of the section (e.g. `sslverify = "0"`).
	Options map[string]string `mapstructure:",remain"`
}

// GPGKey is a key to import with `rpm --import`.
type GPGKey struct {
	// Path of the key in the image, e.g. /etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-9.
	Path string `mapstructure:"path" required:"true"`
	// Armored key written to Path (0644 root). Empty: Path is already in the image.
	Key string `mapstructure:"key"`
}

// User is a user (and optionally its group) created with fixed IDs.
// Entries named like a built-in user (slurm, prometheus, grafana,
// ansible-init, podman) replace it.
type User struct {
	Name string `mapstructure:"name" required:"true" yaml:"-"`
	UID  int    `mapstructure:"uid" required:"true" yaml:"uid"`
	// Primary group, created with GID when missing. Empty: useradd's default.
	Group string `mapstructure:"group" yaml:"group"`
	GID   int    `mapstructure:"gid" yaml:"gid"`
	// Home directory. Default useradd's.
	Home string `mapstructure:"home" yaml:"home"`
	// Login shell. Default useradd's.
	Shell string `mapstructure:"shell" yaml:"shell"`
	// A system account (useradd -r).
	System bool `mapstructure:"system" yaml:"system"`
	// Create the home directory.
	CreateHome bool `mapstructure:"create_home" yaml:"create_home"`
}

// File is a local file or directory copied into the image.
type File struct {
	// Local file or directory. A directory is copied recursively: its
	// contents land in destination, which it becomes.
	Source string `mapstructure:"source" required:"true"`
	// Absolute path in the image.
	Destination string `mapstructure:"destination" required:"true"`
	// Owner as user or user:group. Default root:root.
	Owner string `mapstructure:"owner"`
	// Octal mode of files, e.g. "0644". Default 0644; executables
	// found in a directory source keep 0755. Directories get 0755.
	Mode string `mapstructure:"mode"`
}

// Config is the `fatimage` provisioner's configuration.
type Config struct {
	common.PackerConfig `mapstructure:",squash"`

	// Repositories to write, typically `data.fatimage-ark.<name>.repos`:
	// a list of objects with `name`, `repo_file`, `repo_name`, `baseurl`,
	// `gpgcheck` and optional `enabled`, `priority`, `module_hotfixes`;
	// any other key becomes an extra `key = value` line of the section.
	// Packer's plugin protocol carries maps but not objects, so HCL hands
	// each element over as a map of strings.
	RawRepos []map[string]string `mapstructure:"repos"`
	// repos is RawRepos decoded into typed fields by Prepare.
	repos []Repo
	// Repository credentials. Default env ARK_USERNAME.
	RepoUsername string `mapstructure:"repo_username"`
	// Default env ARK_PASSWORD. Never written to logs.
	RepoPassword string `mapstructure:"repo_password"`
	// GPG keys to write and import.
	GPGKeys []GPGKey `mapstructure:"gpg_keys"`
	// Disable every other section of every other .repo file. Default true.
	ReplaceRepos *bool `mapstructure:"replace_repos"`
	// Sections (repo_name) to enable for the build even if disabled.
	EnableRepos []string `mapstructure:"enable_repos"`
	// Run `dnf update`. Default true.
	Update *bool `mapstructure:"update"`
	// Packages excluded from the update. Default ["grafana","apptainer"].
	UpdateExclude []string `mapstructure:"update_exclude"`
	// auto (reboot when needed), always or never. Default auto.
	Reboot string `mapstructure:"reboot"`
	// How long to wait for the VM to come back. Default 10m.
	RebootTimeout time.Duration `mapstructure:"reboot_timeout"`
	// disabled, permissive or unchanged. Default disabled.
	SELinux string `mapstructure:"selinux"`
	// Inventory groups (fatimage, control, login, compute or feature
	// groups) resolved through the built-in package sets: packages,
	// module streams, binaries, fixed-ID users, services to leave
	// disabled. See the package sets table below.
	Groups []string `mapstructure:"groups"`
	// Extra packages installed in the same transaction.
	Packages []string `mapstructure:"packages"`
	// dnf module streams to enable before installing, e.g. ["nodejs:22"];
	// added to those of `groups`.
	ModuleStreams []string `mapstructure:"module_streams"`
	// Packages removed.
	RemovePackages []string `mapstructure:"remove_packages"`
	// dnf install_weak_deps. Default false.
	InstallWeakDeps bool `mapstructure:"install_weak_deps"`
	// Packages excluded from the install transaction.
	Exclude []string `mapstructure:"exclude"`
	// Grafana plugins as "<id> <version>", installed with grafana-cli;
	// added to those of `groups`.
	GrafanaPlugins []string `mapstructure:"grafana_plugins"`
	// Services left stopped and disabled, added to those of `groups`.
	DisableServices []string `mapstructure:"disable_services"`
	// Users with fixed IDs, added to (or replacing by name) those of `groups`.
	Users []User `mapstructure:"users"`
	// Move the login user's home to `login_home`. Default true.
	MoveLoginHome *bool `mapstructure:"move_login_home"`
	// New home of the login user. Default /var/lib/<login user>.
	LoginHome string `mapstructure:"login_home"`
	// Files and directories to copy into the image.
	Files []File `mapstructure:"files"`
	// Run the cleanup steps. Default true.
	Cleanup *bool `mapstructure:"cleanup"`
	// Names of cleanup steps to skip.
	SkipCleanupSteps []string `mapstructure:"skip_cleanup_steps"`
	// Disable all repos and strip credentials at the end. Default true.
	DisableRepos *bool `mapstructure:"disable_repos"`
	// Release tarballs installed after their sha256 is checked, added to
	// (or overriding by name) the built-in ones of `groups`.
	Binaries []Binary `mapstructure:"binaries"`
	// Install the built-in binaries of `groups` (node_exporter,
	// prometheus, alertmanager). Default true.
	DefaultBinaries *bool `mapstructure:"default_binaries"`
	// Base URL of the releases, `.BaseURL` in a binary's `url`.
	// Default https://github.com/prometheus.
	ReleaseBaseURL string `mapstructure:"release_base_url"`
	// Who downloads the tarballs: `vm` (default; the build VM downloads
	// and verifies them) or `host` (the plugin downloads each once into
	// a content-addressed cache under PACKER_CACHE_DIR, verifies it and
	// uploads it, for VMs without internet access).
	BinarySource string `mapstructure:"binary_source"`
	// Git repositories checked out at a pinned tag or commit (see Git
	// checkouts below).
	GitCheckouts []GitCheckout `mapstructure:"git_checkouts"`
	// Files and tar archives fetched by URL and checked against their
	// sha256 (see Downloads below).
	Downloads []Download `mapstructure:"downloads"`
	// Python virtual environments (or system interpreters) with pinned
	// requirements installed by pip (see Python environments below).
	PythonEnvs []PythonEnv `mapstructure:"python_envs"`
	// Who fetches `git_checkouts`, `downloads` and `python_envs`' packages:
	// `vm` or `host` (the plugin fetches and uploads). Default
	// `binary_source`.
	ContentSource string `mapstructure:"content_source"`
	// systemd units and drop-ins, left enabled, disabled or masked, never
	// started (see System settings below).
	SystemdUnits []SystemdUnit `mapstructure:"systemd_units"`
	// sysctl drop-ins in /etc/sysctl.d.
	Sysctls []Sysctl `mapstructure:"sysctl"`
	// Kernel modules kept from loading, in /etc/modprobe.d.
	ModprobeBlacklists []ModprobeBlacklist `mapstructure:"modprobe_blacklist"`
	// tmpfiles.d drop-ins in /etc/tmpfiles.d.
	Tmpfiles []ConfigFile `mapstructure:"tmpfiles"`
	// PAM limits drop-ins in /etc/security/limits.d.
	Limits []ConfigFile `mapstructure:"limits"`
	// Kernel command-line arguments, e.g. ["rd.auto=1"], set on every boot
	// entry with grubby and in GRUB_CMDLINE_LINUX, grub.cfg regenerated.
	KernelArgs []string `mapstructure:"kernel_args"`
	// Local file receiving the build manifest (JSON) with the package list.
	ManifestOutput string `mapstructure:"manifest_output"`
	// Command template running a script; {{.Path}} is the uploaded script.
	// Default `sudo -n sh -eu {{.Path}}`.
	ExecuteCommand string `mapstructure:"execute_command"`
	// Directory for the run's private work directory (scripts, staged
	// files); it must survive reboots. Default /var/tmp.
	RemoteFolder string `mapstructure:"remote_folder"`

	// Resolved by Prepare: groups merged with the explicit options.
	sets     *resolved
	users    []User
	binaries []Binary

	ctx interpolate.Context
}

var (
	reName     = regexp.MustCompile(`^[a-z_][a-z0-9_-]*\$?$`)
	reRepoFile = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	reSection  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)
	reOptKey   = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	reMode     = regexp.MustCompile(`^0?[0-7]{3,4}$`)
	rePkg      = regexp.MustCompile(`^@?[A-Za-z0-9_.+:*-][A-Za-z0-9_.+:*/ -]*$`)
	// grafana-cli plugin ids and versions
	reGrafanaPlugin = regexp.MustCompile(`^[a-z0-9][a-z0-9-]* [0-9][0-9A-Za-z.+-]*$`)
)

// mergeUsers returns builtin with the configured users replacing those of
// the same name, then the other configured users.
func mergeUsers(builtin, conf []User) []User {
	byName := map[string]User{}
	for _, u := range conf {
		byName[u.Name] = u
	}
	var out []User
	done := map[string]bool{}
	for _, u := range builtin {
		if o, ok := byName[u.Name]; ok {
			u = o
		}
		out = append(out, u)
		done[u.Name] = true
	}
	for _, u := range conf {
		if !done[u.Name] {
			out = append(out, u)
			done[u.Name] = true
		}
	}
	return out
}

func boolDefault(p **bool, v bool) {
	if *p == nil {
		*p = &v
	}
}

// Prepare decodes, defaults and validates without any network access.
func (c *Config) Prepare(raws ...any) error {
	if err := config.Decode(c, &config.DecodeOpts{
		PluginType:         "fatimage",
		Interpolate:        true,
		InterpolateContext: &c.ctx,
		// binaries: url is a Go template rendered per binary
		InterpolateFilter: &interpolate.RenderFilter{Exclude: []string{"execute_command", "binaries"}},
	}, raws...); err != nil {
		return err
	}
	c.repos = nil
	// errors of decoding repos and resolving groups, reported with validate's
	var resolveErrs []error
	for i, raw := range c.RawRepos {
		var r Repo
		dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{WeaklyTypedInput: true, Result: &r})
		if err == nil {
			err = dec.Decode(raw)
		}
		var merr *mapstructure.Error
		if errors.As(err, &merr) {
			for _, e := range merr.Errors {
				resolveErrs = append(resolveErrs, fmt.Errorf("repos[%d]: %s", i, e))
			}
			continue
		} else if err != nil {
			resolveErrs = append(resolveErrs, fmt.Errorf("repos[%d]: %v", i, err))
			continue
		}
		c.repos = append(c.repos, r)
	}
	if c.RepoUsername == "" {
		c.RepoUsername = os.Getenv("ARK_USERNAME")
	}
	if c.RepoPassword == "" {
		c.RepoPassword = os.Getenv("ARK_PASSWORD")
	}
	boolDefault(&c.ReplaceRepos, true)
	boolDefault(&c.Update, true)
	boolDefault(&c.Cleanup, true)
	boolDefault(&c.DisableRepos, true)
	if c.UpdateExclude == nil {
		c.UpdateExclude = []string{"grafana", "apptainer"}
	}
	if c.Reboot == "" {
		c.Reboot = "auto"
	}
	if c.RebootTimeout == 0 {
		c.RebootTimeout = 10 * time.Minute
	}
	if c.SELinux == "" {
		c.SELinux = "disabled"
	}
	if c.ExecuteCommand == "" {
		c.ExecuteCommand = "sudo -n sh -eu {{.Path}}"
	}
	boolDefault(&c.DefaultBinaries, true)
	boolDefault(&c.MoveLoginHome, true)
	if c.ReleaseBaseURL == "" {
		c.ReleaseBaseURL = defaultReleaseBaseURL
	}
	if c.BinarySource == "" {
		c.BinarySource = "vm"
	}
	if c.RemoteFolder == "" {
		c.RemoteFolder = "/var/tmp"
	}
	c.sets, c.users, c.binaries = nil, nil, nil
	sets, setsErr := builtinSets.resolve(c.Groups)
	if setsErr != nil {
		resolveErrs = append(resolveErrs, setsErr)
	} else {
		c.sets = sets
		c.users = mergeUsers(sets.users, c.Users)
		var builtin []Binary
		if *c.DefaultBinaries {
			builtin = sets.binaries
		}
		c.binaries = mergeBinaries(builtin, c.Binaries, builtinSets.Binaries)
	}
	for i := range c.repos {
		boolDefault(&c.repos[i].Enabled, true)
	}
	var errs *packer.MultiError
	for _, e := range append(resolveErrs, c.validate()...) {
		errs = packer.MultiErrorAppend(errs, e)
	}
	if errs != nil && len(errs.Errors) > 0 {
		return errs
	}
	return nil
}

func (c *Config) validate() []error {
	var errs []error
	add := func(f string, a ...any) { errs = append(errs, fmt.Errorf(f, a...)) }

	if len(c.repos) > 0 {
		if c.RepoUsername != "" && c.RepoPassword == "" {
			add("repo_password: must be set when repo_username is set (or set ARK_PASSWORD)")
		}
		if c.RepoPassword != "" && c.RepoUsername == "" {
			add("repo_username: must be set when repo_password is set (or set ARK_USERNAME)")
		}
	}
	for i, r := range c.repos {
		if pulp.NeedsCredentials(r.BaseURL) && (c.RepoUsername == "" || c.RepoPassword == "") {
			add("repos[%d]: %s needs credentials; set repo_username and repo_password (or ARK_USERNAME and ARK_PASSWORD)", i, r.BaseURL)
			break
		}
	}
	sections := map[string]bool{}
	for i, r := range c.repos {
		if r.BaseURL == "" {
			add("repos[%d]: baseurl is required", i)
		} else if !strings.HasPrefix(r.BaseURL, "http://") && !strings.HasPrefix(r.BaseURL, "https://") && !strings.HasPrefix(r.BaseURL, "file://") {
			add("repos[%d]: baseurl %q must start with http://, https:// or file://", i, r.BaseURL)
		}
		if !reRepoFile.MatchString(r.RepoFile) {
			add("repos[%d]: repo_file %q must be a plain file name without .repo (letters, digits, . _ -)", i, r.RepoFile)
		}
		if !reSection.MatchString(r.RepoName) {
			add("repos[%d]: repo_name %q must be a non-empty section name (letters, digits, . _ : -)", i, r.RepoName)
		}
		if k := r.RepoFile + "\x00" + r.RepoName; sections[k] {
			add("repos[%d]: duplicate section [%s] in %s.repo", i, r.RepoName, r.RepoFile)
		} else {
			sections[k] = true
		}
		if r.Priority < 0 || r.Priority > 99 {
			add("repos[%d]: priority %d must be between 1 and 99", i, r.Priority)
		}
		for k, v := range r.Options {
			if !reOptKey.MatchString(k) || isReservedKey(k) {
				add("repos[%d]: options key %q is not allowed", i, k)
			}
			if strings.ContainsAny(v, "\n\r") {
				add("repos[%d]: options value for %q must be one line", i, k)
			}
		}
		for _, s := range []string{r.BaseURL, r.Name} {
			if strings.ContainsAny(s, "\n\r") {
				add("repos[%d]: values must be one line", i)
			}
		}
	}
	if strings.ContainsAny(c.RepoUsername+c.RepoPassword, "\n\r") {
		add("repo_username/repo_password: must be one line")
	}
	for i, k := range c.GPGKeys {
		if !path.IsAbs(k.Path) || path.Clean(k.Path) != k.Path {
			add("gpg_keys[%d]: path %q must be an absolute, clean path", i, k.Path)
		}
		if k.Key != "" && !strings.Contains(k.Key, "-----BEGIN PGP PUBLIC KEY BLOCK-----") {
			add("gpg_keys[%d]: key must be an armored PGP public key block", i)
		}
	}
	switch c.Reboot {
	case "auto", "always", "never":
	default:
		add("reboot: %q is not one of auto, always, never", c.Reboot)
	}
	if c.RebootTimeout < 0 {
		add("reboot_timeout: must be positive, got %s", c.RebootTimeout)
	}
	switch c.SELinux {
	case "disabled", "permissive", "unchanged":
	default:
		add("selinux: %q is not one of disabled, permissive, unchanged", c.SELinux)
	}
	checkPkgs := func(field string, l []string) {
		for i, p := range l {
			if !rePkg.MatchString(p) || strings.HasPrefix(p, "-") {
				add("%s[%d]: %q is not a valid package name or spec", field, i, p)
			}
		}
	}
	checkPkgs("packages", c.Packages)
	checkPkgs("remove_packages", c.RemovePackages)
	checkPkgs("exclude", c.Exclude)
	for i, m := range c.ModuleStreams {
		if !regexp.MustCompile(`^[A-Za-z0-9_.+-]+(:[A-Za-z0-9_.+-]+)?(/[A-Za-z0-9_.+-]+)?$`).MatchString(m) {
			add("module_streams[%d]: %q must be name:stream", i, m)
		}
	}
	checkPkgs("update_exclude", c.UpdateExclude)
	for i, r := range c.EnableRepos {
		if !reSection.MatchString(r) {
			add("enable_repos[%d]: %q is not a valid repo id", i, r)
		}
	}
	// Duplicates among the configured users, then every field and id
	// clash over the merged list (configured users replace built-ins).
	confIdx, users := map[string]int{}, map[string]bool{}
	for i, u := range c.Users {
		if users[u.Name] {
			add("users[%d]: duplicate user %q", i, u.Name)
		}
		users[u.Name] = true
		confIdx[u.Name] = i
	}
	uids, groups := map[int]string{}, map[string]int{}
	for _, u := range c.users {
		label := fmt.Sprintf("built-in user %q", u.Name)
		if i, ok := confIdx[u.Name]; ok {
			label = fmt.Sprintf("users[%d]", i)
		}
		if !reName.MatchString(u.Name) || len(u.Name) > 32 {
			add("%s: name %q is not a valid user name", label, u.Name)
		}
		if u.UID == 0 {
			add("%s: uid is required (a fixed id between 1 and 65533)", label)
		} else if u.UID < 0 || u.UID > 65533 {
			add("%s: uid %d must be between 1 and 65533", label, u.UID)
		} else if o, ok := uids[u.UID]; ok && o != u.Name {
			add("%s: uid %d already used by %q", label, u.UID, o)
		} else {
			uids[u.UID] = u.Name
		}
		if u.Group != "" && !reName.MatchString(u.Group) {
			add("%s: group %q is not a valid group name", label, u.Group)
		}
		if u.GID != 0 && u.Group == "" {
			add("%s: gid needs group", label)
		}
		if u.Group != "" && (u.GID < 0 || u.GID > 65533) {
			add("%s: gid %d must be between 1 and 65533", label, u.GID)
		}
		if u.Group != "" && u.GID > 0 {
			if g, ok := groups[u.Group]; ok && g != u.GID {
				add("%s: group %q given two gids (%d, %d)", label, u.Group, g, u.GID)
			}
			groups[u.Group] = u.GID
		}
		if u.Home != "" && !path.IsAbs(u.Home) {
			add("%s: home %q must be absolute", label, u.Home)
		}
		if u.Shell != "" && !path.IsAbs(u.Shell) {
			add("%s: shell %q must be absolute", label, u.Shell)
		}
	}
	for i, f := range c.Files {
		if f.Source == "" {
			add("files[%d]: source is required", i)
		} else if _, err := os.Stat(f.Source); err != nil {
			add("files[%d]: source: %v", i, err)
		}
		if !path.IsAbs(f.Destination) {
			add("files[%d]: destination %q must be absolute", i, f.Destination)
		}
		if f.Mode != "" && !reMode.MatchString(f.Mode) {
			add("files[%d]: mode %q must be octal like 0644", i, f.Mode)
		}
		if f.Owner != "" && !regexp.MustCompile(`^[a-z_][a-z0-9_-]*(:[a-z_][a-z0-9_-]*)?$`).MatchString(f.Owner) {
			add("files[%d]: owner %q must be user or user:group", i, f.Owner)
		}
	}
	for i, s := range c.SkipCleanupSteps {
		if _, ok := cleanupStepByName(s); !ok {
			add("skip_cleanup_steps[%d]: unknown step %q (known: %s)", i, s, strings.Join(cleanupStepNames(), ", "))
		}
	}
	if u, err := url.Parse(c.ReleaseBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		add("release_base_url: %q must be an http(s) URL", c.ReleaseBaseURL)
	} else {
		errs = append(errs, validateBinaries(c.Binaries, c.binaries, c.ReleaseBaseURL)...)
	}
	switch c.BinarySource {
	case "vm", "host":
	default:
		add("binary_source: %q is not one of vm, host", c.BinarySource)
	}
	for i, gp := range c.GrafanaPlugins {
		if !reGrafanaPlugin.MatchString(gp) {
			add("grafana_plugins[%d]: %q must be \"<plugin id> <version>\"", i, gp)
		}
	}
	for i, s := range c.DisableServices {
		if !reSection.MatchString(s) {
			add("disable_services[%d]: %q is not a valid unit name", i, s)
		}
	}
	if c.LoginHome != "" && (!path.IsAbs(c.LoginHome) || path.Clean(c.LoginHome) != c.LoginHome || c.LoginHome == "/") {
		add("login_home: %q must be an absolute, clean path other than /", c.LoginHome)
	}
	if !strings.Contains(c.ExecuteCommand, "{{.Path}}") {
		add("execute_command: must contain {{.Path}}")
	}
	if !path.IsAbs(c.RemoteFolder) {
		add("remote_folder: %q must be absolute", c.RemoteFolder)
	}
	return append(errs, c.validateContent()...)
}

// credentialsLeftWarning is what to say when the run leaves repository
// credentials on the VM (disable_repos = false): fine before another
// fatimage run, never in a finished image.
func (c *Config) credentialsLeftWarning() string {
	if *c.DisableRepos || c.RepoPassword == "" || len(c.repos) == 0 {
		return ""
	}
	return "fatimage: WARNING: disable_repos = false leaves the repository credentials in /etc/yum.repos.d; " +
		"end the build with a fatimage run that disables the repositories"
}

func isReservedKey(k string) bool {
	switch k {
	case "name", "baseurl", "gpgcheck", "enabled", "username", "password", "priority", "module_hotfixes":
		return true
	}
	return false
}
