package fatimage

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/mitchellh/mapstructure"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// The build plan (issue #24). Prepare turns what the user wrote (Config,
// which it only defaults) into a plan: the repositories, the package
// sets, users, binaries and every content item with its origin. The
// steps read the plan and the run's state; nothing changes the plan or
// the Config after Prepare, so two runs of one provisioner do the same.

// origin is where a plan item comes from: the template, or a built-in
// group, its value from the site's appliance or built in.
type origin struct {
	// group is the built-in group; "" means the template.
	group string
	// variable is the appliance variable the group's item came from, as
	// the site's Ansible resolved it ("" built in, or not from one).
	variable string
	// index is the item's place in its group's list (to find its variable).
	index int
}

func (o origin) String() string {
	switch {
	case o.variable != "":
		return fmt.Sprintf("group %q (the appliance's %s)", o.group, o.variable)
	case o.group != "":
		return fmt.Sprintf("group %q", o.group)
	}
	return "the template"
}

// plan is what Prepare resolved; immutable once made.
type plan struct {
	// cfg is the input the plan was made from (its options, defaulted).
	cfg *Config

	repos []Repo // `repos` decoded, enabled defaulted; the site's dnf_repos_extra
	// extraRepos name the sections of repos from the appliance's dnf_repos_extra.
	extraRepos []string
	// The repository credentials: repo_username/repo_password, else the
	// environment's; none when every repository says it needs none.
	repoUsername, repoPassword string
	// update: `update`, or with an inventory whether the build host is
	// in the appliance's `update` group.
	update bool
	// moveLoginHome: `move_login_home`, or with the site's appliance
	// whether the build host is in its `cluster` group.
	moveLoginHome bool
	// selinux: `selinux`, or with the site's appliance its
	// selinux_state and selinux_policy for a build host in its selinux
	// group (appliance_selinux.go); at Prepare with a site, unchanged.
	selinux selinuxMode
	// hostGroups are the inventory groups of the build host (nil
	// without inventory); setNames the built-in groups installed.
	hostGroups []string
	setNames   []string
	// site is the site's appliance checkout and environment
	// (appliance_dir, appliance_environment); nil without them.
	site *appliance.Site
	// appliance is what the site's Ansible resolved on the build VM (the
	// step `appliance`); nil: the built-in values (appliance commit
	// f49fc24), as in the plan Prepare makes.
	appliance *applianceValues
	// osMajor is the Rocky major the groups were resolved for (osmajor.go).
	osMajor  string
	sets     *resolved // what the groups resolved to; never nil
	users    []User    // the groups' users replaced or joined by `users`
	binaries []Binary  // the groups' binaries, then `binaries`

	// ContentOptions are the groups' content merged with the template's
	// (groupcontent.go); origins, by option name, say where each item of
	// that list comes from, and of users and binaries too.
	ContentOptions
	origins map[string][]origin
}

// newPlan resolves c (decoded and defaulted) into a plan, with the
// groups' values from av (the site's appliance; nil: the built-in ones)
// for the build VM's Rocky major (vmMajor: read from the VM; "": the
// facts', the repositories' or the data's, osmajor.go); the errors are
// those of decoding `repos` and resolving the groups and the inventory.
func newPlan(c *Config, av *applianceValues, vmMajor string) (*plan, []error) {
	p := &plan{cfg: c, site: c.applianceSite(), appliance: av, sets: &resolved{}, origins: map[string][]origin{}}
	errs := p.decodeRepos()
	if av != nil {
		extra, err := av.extraRepos()
		if err != nil {
			errs = append(errs, err)
		}
		for _, r := range extra {
			p.extraRepos = append(p.extraRepos, r.RepoName)
		}
		p.repos = withExtraRepos(p.repos, extra)
	}
	p.resolveCredentials()
	p.setNames = slices.Clone(c.Groups)
	typos := suggestGroup(c.Groups)
	errs = append(errs, typos...)
	invPaths, err := c.inventoryPaths(p.site)
	if err != nil {
		errs = append(errs, err)
	}
	if av != nil {
		// the site's Ansible put the build host in these groups
		p.hostGroups = av.groups
		p.setNames = appendUnique(p.setNames, builtinsOf(av.groups)...)
		p.setNames = appendUnique(p.setNames, av.native...)
	} else if len(invPaths) > 0 || c.InventoryGroups != "" {
		builtins, hostGroups, invErrs := c.inventoryBuiltins(invPaths)
		errs = append(errs, invErrs...)
		p.hostGroups = hostGroups
		p.setNames = appendUnique(p.setNames, builtins...)
	} else if roles := roleGroups(c.Groups); len(roles) > 0 {
		builtins, hostGroups, roleErrs := c.roleBuiltins(roles)
		errs = append(errs, roleErrs...)
		p.hostGroups = hostGroups
		p.setNames = appendUnique(slices.DeleteFunc(p.setNames, func(g string) bool { return slices.Contains(roles, g) }), builtins...)
	}
	if p.site != nil {
		// their roles run through the site's Ansible (site_role)
		p.setNames = slices.DeleteFunc(p.setNames, func(g string) bool { return packagesets.SiteRole(g) != "" })
	}
	p.hostDefaults(c, av != nil, len(invPaths) > 0)
	if err := p.selinuxFor(c, av); err != nil {
		errs = append(errs, err)
	}
	p.osMajor = p.majorFor(vmMajor)
	sets, setsErr := resolveGroups(p.setNames, c.groupOptions(), av, p.osMajor)
	if setsErr != nil {
		if len(typos) == 0 { // else the "did you mean" already names the cause
			errs = append(errs, setsErr)
		}
		return p, errs
	}
	p.sets = sets
	if av != nil {
		vendor, applied, err := av.vendorRepos(sets.groups)
		if err != nil {
			errs = append(errs, err)
		}
		p.repos = withExtraRepos(p.repos, vendor)
		sets.applied = append(sets.applied, applied...)
	}
	p.users = mergeUsers(sets.users, c.Users)
	var builtin []Binary
	if *c.DefaultBinaries {
		builtin = sets.binaries
	}
	p.binaries = mergeBinaries(builtin, c.Binaries)
	p.origins["users"] = namedOrigins(p.users, c.Users, sets.groups, func(u User) string { return u.Name }, func(g packagesets.Group) []string { return g.UserNames() })
	p.origins["binaries"] = namedOrigins(p.binaries, c.Binaries, sets.groups, func(b Binary) string { return b.Name }, func(g packagesets.Group) []string { return g.Binaries })
	return p, errs
}

// hostDefaults decides update and moveLoginHome when the template leaves
// them unset: with an inventory, as the appliance does for the build
// host's groups (`update`; `cluster`, whose play moves the login user's
// home), else true.
func (p *plan) hostDefaults(c *Config, site, inventory bool) {
	switch {
	case c.Update != nil:
		p.update = *c.Update
	case inventory || site || c.ApplianceDir != "" && len(roleGroups(c.Groups)) > 0: // an extra build's host is not in `update`
		p.update = slices.Contains(p.hostGroups, "update")
	default:
		p.update = true
	}
	switch {
	case c.MoveLoginHome != nil:
		p.moveLoginHome = *c.MoveLoginHome
	case site: // the site's Ansible said the host's groups
		p.moveLoginHome = slices.Contains(p.hostGroups, "cluster")
	default:
		p.moveLoginHome = true
	}
}

// selinuxFor decides the image's SELinux: the option without the site's
// appliance; with it, what the site's appliance sets for the build host
// (av; nil at Prepare, where nothing is decided yet).
func (p *plan) selinuxFor(c *Config, av *applianceValues) error {
	switch {
	case av != nil:
		m, err := av.selinux()
		p.selinux = m
		return err
	case p.site != nil:
		p.selinux = selinuxMode{state: "unchanged"}
	default:
		p.selinux = selinuxMode{state: c.SELinux}
	}
	return nil
}

// namedOrigins are the origins of merged, items known by name: the
// template when it sets one of that name (it replaces a group's), else
// the first group listing it.
func namedOrigins[T any](merged, template []T, groups []packagesets.Group, name func(T) string, listed func(packagesets.Group) []string) []origin {
	out := make([]origin, len(merged))
	for i, v := range merged {
		n := name(v)
		if slices.ContainsFunc(template, func(t T) bool { return name(t) == n }) {
			continue
		}
		if j := slices.IndexFunc(groups, func(g packagesets.Group) bool { return slices.Contains(listed(g), n) }); j >= 0 {
			out[i] = origin{group: groups[j].Name}
		}
	}
	return out
}

// decodeRepos decodes `repos` (maps of strings, as Packer hands them
// over) into typed entries.
func (p *plan) decodeRepos() []error {
	var errs []error
	for i, raw := range p.cfg.RawRepos {
		var r Repo
		dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{WeaklyTypedInput: true, Result: &r})
		if err == nil {
			err = dec.Decode(raw)
		}
		var merr *mapstructure.Error
		if errors.As(err, &merr) {
			for _, e := range merr.Errors {
				errs = append(errs, fmt.Errorf("repos[%d]: %s", i, e))
			}
			continue
		} else if err != nil {
			errs = append(errs, fmt.Errorf("repos[%d]: %v", i, err))
			continue
		}
		boolDefault(&r.Enabled, true)
		p.repos = append(p.repos, r)
	}
	return errs
}

// resolveCredentials takes repo_username/repo_password, else
// ARK_USERNAME/ARK_PASSWORD. Repositories the data source marked
// credentials = "none" (a site Pulp serving without a guard) need no
// password; when all are so marked, none is taken to the VM at all, not
// even ARK_PASSWORD.
func (p *plan) resolveCredentials() {
	p.repoUsername, p.repoPassword = p.cfg.RepoUsername, p.cfg.RepoPassword
	if p.repoUsername == "" {
		p.repoUsername = os.Getenv("ARK_USERNAME")
	}
	if p.repoPassword == "" {
		p.repoPassword = os.Getenv("ARK_PASSWORD")
	}
	if len(p.repos) > 0 && !slices.ContainsFunc(p.repos, func(r Repo) bool { return r.Credentials != "none" }) {
		p.repoUsername, p.repoPassword = "", ""
	}
}

// repoIDs are the repositories enabled for the build: the enabled
// sections of repos and enable_repos.
func (p *plan) repoIDs() []string {
	return appendUnique(enabledRepoIDs(p.repos), p.cfg.EnableRepos...)
}

// hasBuiltin reports whether the built-in group name is in the build.
func (p *plan) hasBuiltin(name string) bool {
	return slices.ContainsFunc(p.sets.groups, func(g packagesets.Group) bool { return g.Name == name })
}

// disabledServices are the groups' services and disable_services.
func (p *plan) disabledServices() []string {
	return appendUnique(slices.Clone(p.sets.Services), p.cfg.DisableServices...)
}

// grafanaPlugins are the groups' plugins and grafana_plugins.
func (p *plan) grafanaPlugins() []string {
	return appendUnique(slices.Clone(p.sets.GrafanaPlugins), p.cfg.GrafanaPlugins...)
}

// credentialsLeftWarning is what to say when the run leaves repository
// credentials on the VM (disable_repos = false): fine before another
// fatimage run, never in a finished image.
func (p *plan) credentialsLeftWarning() string {
	if *p.cfg.DisableRepos || p.repoPassword == "" || len(p.repos) == 0 {
		return ""
	}
	return "fatimage: WARNING: disable_repos = false leaves the repository credentials in /etc/yum.repos.d; " +
		"end the build with a fatimage run that disables the repositories"
}
