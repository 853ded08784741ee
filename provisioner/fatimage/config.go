//go:generate packer-sdc mapstructure-to-hcl2 -type Config,ContentOptions,User,Binary
//go:generate packer-sdc struct-markdown

package fatimage

import (
	"fmt"
	"log"
	"time"

	"github.com/hashicorp/packer-plugin-sdk/common"
	"github.com/hashicorp/packer-plugin-sdk/packer"
	"github.com/hashicorp/packer-plugin-sdk/template/config"
	"github.com/hashicorp/packer-plugin-sdk/template/interpolate"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/keys"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/python"
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
	// The Rocky version the repository is for (the `fatimage-ark` data
	// source's `os_version`, which it gives every repository). The build
	// fails when the build VM's major version (VERSION_ID in its
	// /etc/os-release) differs, and warns when its minor does.
	OSVersion string `mapstructure:"os_version"`
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
	// The data source's `site_pulp` outcome (`created` or `reused`);
	// summarised in the build output.
	SitePulp string `mapstructure:"site_pulp"`
	// `none`: write no credentials for this repository even when
	// repo_username/repo_password are set (the data source says so for a
	// site Pulp that serves without them).
	Credentials string `mapstructure:"credentials"`
	// Any other key of a `repos` element is written as an extra
	// `key = value` line of the section (e.g. `sslverify = "0"`). A key
	// naming a credential (one with password, passwd, token, secret,
	// username or credential in it, e.g. `proxy_password`) is written only
	// into the build's copy on the tmpfs, never into the disabled file
	// left in the image.
	Options map[string]string `mapstructure:",remain"`
}

// User is a user (and optionally its group) created with fixed IDs.
// Entries named like a built-in user (slurm, prometheus, grafana,
// ansible-init, podman) replace it.
type User struct {
	Name string `mapstructure:"name" required:"true"`
	UID  int    `mapstructure:"uid" required:"true"`
	// Primary group, created with GID when missing. Empty: useradd's
	// default, as Ansible's user module without `group`: a group of the
	// user's name made with it, or, when a group of that name already
	// exists, `useradd -N`'s (`/etc/default/useradd`'s `GROUP`, `users`
	// on Rocky).
	Group string `mapstructure:"group"`
	GID   int    `mapstructure:"gid"`
	// Whether `group` is the user's primary group. Default true. False
	// makes `group` (with `gid`) on its own, before every user, and then
	// the user as without `group`: what an appliances_local_users entry
	// with a `group` whose `user` names none gives (the appliance's
	// grafana and prometheus).
	PrimaryGroup *bool `mapstructure:"primary_group"`
	// Home directory. Default useradd's.
	Home string `mapstructure:"home"`
	// Login shell. Default useradd's.
	Shell string `mapstructure:"shell"`
	// A system account (useradd -r).
	System bool `mapstructure:"system"`
	// Create the home directory.
	CreateHome bool `mapstructure:"create_home"`
}

// Config is the `fatimage` provisioner's configuration.
type Config struct {
	common.PackerConfig `mapstructure:",squash"`
	// The content options (content_options.go): what the built-in groups
	// bring too, merged with these into the build plan.
	ContentOptions `mapstructure:",squash"`

	// Repositories to write, typically `data.fatimage-ark.<name>.repos`:
	// a list of objects with `name`, `repo_file`, `repo_name`, `baseurl`,
	// `gpgcheck` and optional `enabled`, `priority`, `module_hotfixes`;
	// any other key becomes an extra `key = value` line of the section.
	// Packer's plugin protocol carries maps but not objects, so HCL hands
	// each element over as a map of strings.
	RawRepos []map[string]string `mapstructure:"repos"`
	// Repository credentials. Default env ARK_USERNAME.
	RepoUsername string `mapstructure:"repo_username"`
	// Default env ARK_PASSWORD. Never written to logs.
	RepoPassword string `mapstructure:"repo_password"`
	// Import the image's own distribution key
	// (/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-<major>, already in the image)
	// when `repos` are set, as the appliance does. Default true.
	ImportOSKey *bool `mapstructure:"import_os_key"`
	// Disable every other section of every other .repo file. Default true.
	ReplaceRepos *bool `mapstructure:"replace_repos"`
	// Sections (repo_name) to enable for the build even if disabled.
	EnableRepos []string `mapstructure:"enable_repos"`
	// Run `dnf update`. Default true; with `inventory` (or a node role in
	// `groups` resolved from `appliance_dir`), whether the build host is
	// in the appliance's `update` group (a fatimage build's is, an extra
	// build's or a role's alone is not).
	Update *bool `mapstructure:"update"`
	// Installed packages kept at their version by the update (excluded
	// from the transaction); one not installed yet is installed as the
	// snapshot has it. Default ["grafana","apptainer"].
	UpdateExclude []string `mapstructure:"update_exclude"`
	// auto, always or never. Default auto: reboot only when a reboot is
	// pending (new kernel or core library, SELinux mode) and a later step
	// needs the running kernel (DKMS/kmod, kernel-devel, OFED/DOCA/CUDA
	// packages); otherwise the image boots the new kernel on first boot.
	// always: reboot after the package transaction. never: do not reboot.
	Reboot string `mapstructure:"reboot"`
	// How long to wait for the VM to come back. Default 10m; at least 1m.
	RebootTimeout time.Duration `mapstructure:"reboot_timeout"`
	// enforcing, permissive, disabled or unchanged. Default disabled. Not with
	// `appliance_environment`: then the site's `selinux_state` and
	// `selinux_policy` (enforcing, permissive or disabled) set SELinux for
	// a build host in its `selinux` group, as the appliance's bootstrap.yml
	// does, and a build host outside that group keeps its mode.
	SELinux string `mapstructure:"selinux"`
	// Inventory groups (fatimage or feature groups) resolved through the
	// built-in package sets: packages, module streams, binaries, fixed-ID
	// users, services to leave disabled. See the package sets table below.
	// A node role (control, login, compute) without `inventory` is
	// resolved from `appliance_dir`'s common and site inventories as
	// Ansible does (the host in `builder` and `groups`), and refused
	// without a checkout: the appliance's inventories, not a list of ours,
	// decide what a role's image holds.
	Groups []string `mapstructure:"groups"`
	// Paths of an appliance environment's inventory: `groups` files or
	// inventory directories (their INI files), in the appliance's order
	// common → site → environment, e.g.
	// ["environments/common/inventory", "environments/site/inventory",
	// "environments/mysite/inventory"]. The build host is put in
	// `builder` and `inventory_groups` and resolved through `[x:children]`
	// as Ansible does; the built-in sets of the groups it ends up in are
	// installed, added to those of `groups`. See docs/appliance-contract.md.
	Inventory []string `mapstructure:"inventory"`
	// The build's inventory groups, comma-separated as the appliance's
	// Packer variable `inventory_groups` takes them (e.g. "fatimage" or
	// "doca,cuda"). Used with `inventory`; without it the host is in
	// these groups and `builder` only.
	InventoryGroups string `mapstructure:"inventory_groups"`
	// The site's checkout of the Slurm appliance (the directory holding
	// `ansible/`): the built-in groups compute_init and gateway place
	// their playbooks and roles from it, as the appliance does.
	ApplianceDir string `mapstructure:"appliance_dir"`
	// The site's appliance environment, the directory the environment's
	// `activate` exports as APPLIANCES_ENVIRONMENT_ROOT (in HCL:
	// `env("APPLIANCES_ENVIRONMENT_ROOT")`). With it and `appliance_dir`
	// the build reads the site's configuration as the appliance's own
	// build does: the inventory `packer/ansible-inventory.sh` composes,
	// `builder` plus `inventory_groups`, `packer/openhpc_extravars.yml`,
	// evaluated by the site's own Ansible against the build VM. See
	// docs/appliance-variables.md.
	ApplianceEnvironment string `mapstructure:"appliance_environment"`
	// The directory holding the site's `ansible-playbook`; default the
	// checkout's `venv/bin` when it has one, else PATH.
	ApplianceAnsibleDir string `mapstructure:"appliance_ansible_dir"`
	// Directories searched for roles and collections after those the
	// environment's ansible.cfg names: where the site installed its
	// Galaxy requirements when not there.
	ApplianceRolesPath       []string `mapstructure:"appliance_roles_path"`
	ApplianceCollectionsPath []string `mapstructure:"appliance_collections_path"`
	// Refuse at `packer validate`, naming the role and the file, what the
	// appliance's `ansible/fatimage.yml` would run for the build host and
	// the plugin does not implement natively, instead of running it
	// through the site's Ansible. Default false.
	ApplianceStrict bool `mapstructure:"appliance_strict"`
	// Base URL the built-in groups clone GitHub repositories from
	// (`<git_base_url>/<owner>/<name>.git`), for a mirror. Default
	// https://github.com.
	GitBaseURL string `mapstructure:"git_base_url"`
	// A registry (host[:port]) serving the built-in groups' container
	// images (mysql, opensearch, filebeat) under their names and tags, e.g.
	// a site mirror; empty: each image's own registry (docker.io,
	// docker.elastic.co). Its TLS and credentials come from
	// `container_registries`.
	ContainerRegistry string `mapstructure:"container_registry"`
	// Base URL of the GitHub release downloads the built-in groups fetch
	// (`<base>/<owner>/<repo>/releases/download/...`, e.g. the
	// slurm_exporter RPM), for a mirror. Default https://github.com.
	GitHubReleasesURL string `mapstructure:"github_releases_url"`
	// Package index of the built-in groups' Python environments (pip
	// --index-url). Default https://pypi.org/simple.
	PythonIndexURL string `mapstructure:"python_index_url"`
	// Accept a plain-http Python package index (python_index_url, and
	// python_envs' index_url and extra_index_url): pip is told to trust
	// its host (--trusted-host), so only hash pins check what it serves
	// (a warning says so). Without it such an index is refused at
	// validate.
	PythonIndexInsecure bool `mapstructure:"python_index_insecure"`
	// Base URL of Posit's downloads the built-in group
	// openondemand_rstudio fetches rstudio-server from
	// (`<base>/server/rhel<major>/x86_64/...`: rhel9, or rhel8 on Rocky
	// 8), for a mirror. Default https://download2.rstudio.org.
	RStudioDownloadURL string `mapstructure:"rstudio_download_url"`
	// Install sssd-ldap with the sssd group, as the appliance's
	// `sssd_install_ldap` does, for builds without `appliance_environment`;
	// with it the site's own `sssd_install_ldap` decides (the sssd role's
	// scope: `.stackhpc` sets it for `builder`), and this option is refused.
	SSSDInstallLDAP bool `mapstructure:"sssd_install_ldap"`
	// Extra packages installed in the same transaction: names, specs or
	// groups (`@Development Tools`), no globs. Without `update`, the name
	// of an installed package keeps that package's version, as Ansible's
	// dnf `state: present` does (a provide installs its newest provider).
	Packages []string `mapstructure:"packages"`
	// dnf module streams to enable before installing, e.g. ["nodejs:22"];
	// added to those of `groups`.
	ModuleStreams []string `mapstructure:"module_streams"`
	// Packages removed, by name (no globs).
	RemovePackages []string `mapstructure:"remove_packages"`
	// dnf install_weak_deps for the transaction. Default true (dnf's
	// default, as the appliance installs); the groups' Slurm set is
	// installed without weak dependencies whatever this says.
	InstallWeakDeps *bool `mapstructure:"install_weak_deps"`
	// Packages excluded from the package transaction (update and install).
	Exclude []string `mapstructure:"exclude"`
	// Grafana plugins as "<id> <version>", installed with grafana-cli;
	// added to those of `groups`.
	GrafanaPlugins []string `mapstructure:"grafana_plugins"`
	// sha256 (hex) of Grafana plugins' zip files (the linux-amd64
	// package), by plugin id. A plugin with one is pinned: its zip is
	// fetched from `grafana_plugin_url` by whoever `content_source` names
	// (the VM, or the host through its cache), checked before any package
	// work and unpacked into /var/lib/grafana/plugins/<id> as grafana-cli
	// does. A plugin without one is installed by grafana-cli on the VM,
	// which needs grafana.com.
	GrafanaPluginSHA256 map[string]string `mapstructure:"grafana_plugin_sha256"`
	// Base URL of the Grafana plugin repository; a pinned plugin's zip is
	// `<url>/<id>/versions/<version>/download?os=linux&arch=amd64`.
	// Default https://grafana.com/api/plugins.
	GrafanaPluginURL string `mapstructure:"grafana_plugin_url"`
	// Base URL of grafana.com's dashboard API, for a mirror: a dashboard
	// is `<url>/api/dashboards/<id>/revisions/<revision>/download`.
	// Default https://grafana.com.
	GrafanaDashboardsURL string `mapstructure:"grafana_dashboards_url"`
	// Base URL of the HPL source the hpctests group fetches
	// (`<url>/hpl-2.3.tar.gz`), for a mirror. Default
	// http://www.netlib.org/benchmark/hpl.
	NetlibURL string `mapstructure:"netlib_url"`
	// Services left stopped and disabled, added to those of `groups`.
	DisableServices []string `mapstructure:"disable_services"`
	// Users with fixed IDs, added to (or replacing by name) those of `groups`.
	Users []User `mapstructure:"users"`
	// Move the login user's home to `login_home`. Default true; with the
	// site's appliance, whether the build host is in `cluster` (the
	// appliance moves it in its play for `cluster`).
	MoveLoginHome *bool `mapstructure:"move_login_home"`
	// New home of the login user. Default /var/lib/<login user>.
	LoginHome string `mapstructure:"login_home"`
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
	// TLS and credentials of the registries `containers` pull from (see
	// Containers below).
	ContainerRegistries []content.Registry `mapstructure:"container_registries"`
	// Who fetches `git_checkouts`, `downloads`, `rpm_urls`, `python_envs`'
	// packages, pinned Grafana plugins and `containers` (host: as OCI archives):
	// `vm` or `host` (the plugin fetches and uploads). Default
	// `binary_source`.
	ContentSource string `mapstructure:"content_source"`
	// Local file receiving the build manifest (JSON) with the package list.
	ManifestOutput string `mapstructure:"manifest_output"`
	// Local file receiving the image's SBOM (CycloneDX 1.6 JSON); the
	// image holds it as /var/lib/image/sbom.cdx.json whenever this,
	// previous_manifest or change_report_output is set.
	SBOMOutput string `mapstructure:"sbom_output"`
	// The previous build's manifest_output or sbom_output (a path or an
	// http(s) URL) the change report compares this image with; missing,
	// the report says so and lists the whole content.
	PreviousManifest string `mapstructure:"previous_manifest"`
	// Local file receiving the change report as Markdown (a CI job's
	// summary); the JSON report is written beside it (.json).
	ChangeReportOutput string `mapstructure:"change_report_output"`
	// Command template running a script; {{.Path}} is the uploaded script.
	// Default `sudo -n sh -eu {{.Path}}`.
	ExecuteCommand string `mapstructure:"execute_command"`
	// Directory for the run's private work directory (scripts, staged
	// files); it must survive reboots. Default /var/tmp.
	RemoteFolder string `mapstructure:"remote_folder"`

	ctx interpolate.Context
}

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

// prepare decodes and defaults the configuration and makes the build
// plan from it (plan.go), then validates both, without any network
// access. The plan is returned even with errors, for tests to look at.
func (c *Config) prepare(raws ...any) (*plan, error) {
	if err := config.Decode(c, &config.DecodeOpts{
		PluginType:         "fatimage",
		Interpolate:        true,
		InterpolateContext: &c.ctx,
		// binaries: url is a Go template rendered per binary
		InterpolateFilter: &interpolate.RenderFilter{Exclude: []string{"execute_command", "binaries"}},
	}, raws...); err != nil {
		return nil, err
	}
	c.setDefaults()
	p, err := c.plan(nil, "")
	if err == nil && p.site == nil && len(p.sets.groups) > 0 {
		// a provisioner's Prepare has no Ui: Packer's log has it at
		// validate, the build output at the run's start (step appliance)
		log.Print("[WARN] fatimage: " + fallbackWarning)
	}
	return p, err
}

// plan makes the build plan of the decoded, defaulted configuration,
// with the groups' values from av (nil: the built-in ones), and
// validates it: at Prepare without av, at the run's start with the
// values the site's appliance resolved on the build VM.
func (c *Config) plan(av *applianceValues, vmMajor string) (*plan, error) {
	p, errs := newPlan(c, av, vmMajor)
	errs = append(errs, c.validate(p)...)
	// The groups' content joins the template's after the template's own
	// is checked, so an index in an error is the template's and a
	// group's problem names the group.
	errs = append(errs, p.mergeGroupContent()...)
	var merr *packer.MultiError
	for _, e := range errs {
		merr = packer.MultiErrorAppend(merr, e)
	}
	if merr != nil && len(merr.Errors) > 0 {
		return p, merr
	}
	return p, nil
}

// setDefaults fills in what the user left unset.
func (c *Config) setDefaults() {
	boolDefault(&c.ReplaceRepos, true)
	boolDefault(&c.ImportOSKey, true)
	boolDefault(&c.Cleanup, true)
	boolDefault(&c.DisableRepos, true)
	boolDefault(&c.DefaultBinaries, true)
	if c.UpdateExclude == nil {
		c.UpdateExclude = []string{"grafana", "apptainer"}
	}
	if c.RebootTimeout == 0 {
		c.RebootTimeout = 10 * time.Minute
	}
	for _, d := range []struct {
		field *string
		value string
	}{
		{&c.Reboot, "auto"},
		{&c.ExecuteCommand, "sudo -n sh -eu {{.Path}}"},
		{&c.ReleaseBaseURL, defaultReleaseBaseURL},
		{&c.BinarySource, "vm"},
		{&c.RemoteFolder, "/var/tmp"},
		{&c.GitBaseURL, "https://github.com"},
		{&c.GitHubReleasesURL, "https://github.com"},
		{&c.RStudioDownloadURL, "https://download2.rstudio.org"},
		{&c.PythonIndexURL, python.DefaultIndexURL},
		{&c.NetlibURL, defaultNetlibURL},
	} {
		if *d.field == "" {
			*d.field = d.value
		}
	}
	if c.SELinux == "" && c.ApplianceEnvironment == "" {
		// with appliance_environment the site's selinux_state decides
		c.SELinux = "disabled"
	}
	keys.DefaultPaths(c.GPGKeys)
}

// validators check the configuration and its plan, one concern each
// (validate_*.go); each returns every problem it finds, naming the field.
var validators = []func(*Config, *plan) []error{
	validateRepos,
	validateSystem,
	validatePackages,
	validateUsers,
	validateBinaries,
	validateContent,
	validateContainers,
	validateSBOM,
	validateURLs,
	validateAppliance,
	validateApplianceStrict,
}

func (c *Config) validate(p *plan) []error {
	var errs []error
	for _, v := range validators {
		errs = append(errs, v(c, p)...)
	}
	return errs
}

// problems collects validation errors.
type problems []error

func (p *problems) add(format string, a ...any) { *p = append(*p, fmt.Errorf(format, a...)) }

func isReservedKey(k string) bool {
	switch k {
	case "name", "baseurl", "gpgcheck", "enabled", "username", "password", "priority", "module_hotfixes", "site_pulp", "credentials":
		return true
	}
	return false
}
