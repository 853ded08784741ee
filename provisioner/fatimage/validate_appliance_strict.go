package fatimage

import (
	"slices"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// validateApplianceStrict: with appliance_strict, every step of the
// site's fatimage.yml that would run through Ansible for the build host
// is an error naming it and its file. Decided from files alone (no
// Ansible, no network): the host's groups from the environment's
// inventory files, play host patterns and `'x' in group_names`
// conditions; a step whose pattern or condition only Ansible can decide
// counts as running, and the error says so. A step a built-in group
// does natively is native here when the build would add that group
// (nativeGroupsRun: the rebuild role's install runs on every build host,
// extra builds too), as the build decides it.
func validateApplianceStrict(c *Config, p *plan) []error {
	if !c.ApplianceStrict || p.site == nil || p.site.Check() != nil {
		return nil
	}
	var errs problems
	steps, err := p.site.Steps()
	if err != nil {
		errs.add("appliance_strict: reading the checkout's ansible/fatimage.yml: %v", err)
		return errs
	}
	groups, err := p.site.StaticGroups()
	if err != nil {
		errs.add("appliance_strict: reading the environment's inventory: %v", err)
		return errs
	}
	static := func(st appliance.Step) (bool, error) {
		runs, _ := appliance.StaticRuns(st, groups)
		return runs, nil
	}
	added, _ := nativeGroupsRun(steps, builtinsOf(groups), static)
	built := func(g string) bool {
		// the build drops a site_role group from its plan, as Prepare does
		return p.hasBuiltin(g) || (slices.Contains(added, g) && packagesets.SiteRole(g) == "")
	}
	for _, st := range applianceSteps(steps, built) {
		if st.Kind == "hook" || st.native != "" {
			continue
		}
		runs, sure := appliance.StaticRuns(st.Step, groups)
		switch {
		case !runs:
		case sure:
			errs.add("appliance_strict: %s would run through Ansible (%s)", st.Label(), st.why)
		default:
			errs.add("appliance_strict: %s may run through Ansible (%s; its host pattern or condition needs Ansible to decide, so it counts as running)", st.Label(), st.why)
		}
	}
	return errs
}
