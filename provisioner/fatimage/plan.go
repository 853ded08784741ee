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
// group. (The site's appliance, a variable of its inventory, is the
// next origin: issue #25.)
type origin struct {
	// group is the built-in group; "" means the template.
	group string
}

func (o origin) String() string {
	if o.group != "" {
		return fmt.Sprintf("group %q", o.group)
	}
	return "the template"
}

// plan is what Prepare resolved; immutable once made.
type plan struct {
	// cfg is the input the plan was made from (its options, defaulted).
	cfg *Config

	repos []Repo // `repos` decoded, enabled defaulted
	// The repository credentials: repo_username/repo_password, else the
	// environment's; none when every repository says it needs none.
	repoUsername, repoPassword string
	// update: `update`, or with an inventory whether the build host is
	// in the appliance's `update` group.
	update bool
	// hostGroups are the inventory groups of the build host (nil
	// without inventory); setNames the built-in groups installed.
	hostGroups []string
	setNames   []string
	// site is the site's appliance checkout and environment
	// (appliance_dir, appliance_environment); nil without them.
	site     *appliance.Site
	sets     *resolved // what the groups resolved to; never nil
	users    []User    // the groups' users replaced or joined by `users`
	binaries []Binary  // the groups' binaries, then `binaries`

	// ContentOptions are the groups' content merged with the template's
	// (groupcontent.go); origins, by option name, say where each item of
	// that list comes from, and of users and binaries too.
	ContentOptions
	origins map[string][]origin
}

// newPlan resolves c (decoded and defaulted) into a plan; the errors are
// those of decoding `repos` and resolving the groups and the inventory.
func newPlan(c *Config) (*plan, []error) {
	p := &plan{cfg: c, site: c.applianceSite(), sets: &resolved{}, origins: map[string][]origin{}}
	errs := p.decodeRepos()
	p.resolveCredentials()
	p.setNames = slices.Clone(c.Groups)
	typos := suggestGroup(c.Groups)
	errs = append(errs, typos...)
	if len(c.Inventory) > 0 || c.InventoryGroups != "" {
		builtins, hostGroups, invErrs := c.inventoryBuiltins()
		errs = append(errs, invErrs...)
		p.hostGroups = hostGroups
		p.setNames = appendUnique(p.setNames, builtins...)
	}
	switch {
	case c.Update != nil:
		p.update = *c.Update
	case len(c.Inventory) > 0: // an extra build's host is not in `update`
		p.update = slices.Contains(p.hostGroups, "update")
	default:
		p.update = true
	}
	sets, setsErr := resolveGroups(p.setNames, c.groupOptions())
	if setsErr != nil {
		if len(typos) == 0 { // else the "did you mean" already names the cause
			errs = append(errs, setsErr)
		}
		return p, errs
	}
	p.sets = sets
	p.users = mergeUsers(sets.users, c.Users)
	var builtin []Binary
	if *c.DefaultBinaries {
		builtin = sets.binaries
	}
	p.binaries = mergeBinaries(builtin, c.Binaries)
	p.origins["users"] = namedOrigins(p.users, c.Users, sets.groups, func(u User) string { return u.Name }, func(g packagesets.Group) []string { return g.Users })
	p.origins["binaries"] = namedOrigins(p.binaries, c.Binaries, sets.groups, func(b Binary) string { return b.Name }, func(g packagesets.Group) []string { return g.Binaries })
	return p, errs
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
