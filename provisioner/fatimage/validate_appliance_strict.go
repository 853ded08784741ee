package fatimage

import (
	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
)

// validateApplianceStrict: with appliance_strict, every step of the
// site's fatimage.yml that would run through Ansible for the build host
// is an error naming it and its file. Decided from files alone (no
// Ansible, no network): the host's groups from the environment's
// inventory files, play host patterns and `'x' in group_names`
// conditions; a step whose pattern or condition only Ansible can decide
// counts as running, and the error says so.
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
	for _, st := range applianceSteps(steps, p.hasBuiltin) {
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
