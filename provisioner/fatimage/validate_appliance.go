package fatimage

import (
	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
)

// validateAppliance checks the appliance options and, when they name a
// site, that its checkout and environment hold what the appliance's own
// build reads (files only: no command runs, no network).
func validateAppliance(c *Config, p *plan) []error {
	var errs problems
	if c.ApplianceEnvironment == "" {
		for name, set := range map[string]bool{
			"appliance_ansible_dir":      c.ApplianceAnsibleDir != "",
			"appliance_roles_path":       len(c.ApplianceRolesPath) > 0,
			"appliance_collections_path": len(c.ApplianceCollectionsPath) > 0,
			"appliance_strict":           c.ApplianceStrict,
		} {
			if set {
				errs.add("%s: needs appliance_environment (and appliance_dir): it says how the site's appliance is read", name)
			}
		}
		return errs
	}
	if c.ApplianceDir == "" {
		errs.add("appliance_environment: needs appliance_dir, the checkout the environment belongs to")
		return errs
	}
	if len(c.Inventory) > 0 {
		errs.add("inventory: not with appliance_environment, whose inventory the appliance's packer/ansible-inventory.sh composes")
	}
	if c.SSSDInstallLDAP {
		errs.add("sssd_install_ldap: not with appliance_environment, whose own sssd_install_ldap (the sssd role's scope, e.g. its group_vars) says whether sssd-ldap is installed")
	}
	if c.SELinux != "" {
		errs.add("selinux: not with appliance_environment, whose own selinux_state (with selinux_policy) sets SELinux for a build host in its selinux group, as bootstrap.yml does; outside that group SELinux is left unchanged")
	}
	if err := p.site.Check(); err != nil {
		errs.add("appliance_environment: %v", err)
	}
	return errs
}

// applianceSite is the site the options name, nil without
// appliance_environment.
func (c *Config) applianceSite() *appliance.Site {
	if c.ApplianceEnvironment == "" || c.ApplianceDir == "" {
		return nil
	}
	return &appliance.Site{
		Repo:            c.ApplianceDir,
		Environment:     c.ApplianceEnvironment,
		Groups:          appliance.ParseGroups(c.InventoryGroups),
		RolesPath:       c.ApplianceRolesPath,
		CollectionsPath: c.ApplianceCollectionsPath,
		AnsibleDir:      c.ApplianceAnsibleDir,
	}
}
