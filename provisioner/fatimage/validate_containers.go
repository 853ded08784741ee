package fatimage

import (
	"fmt"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/containers"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// validateContainers checks container_registries and that each of the
// template's containers is root's or a user's this run creates; the
// images themselves are the kind's to check (containers.Kind.Validate),
// the groups' users groupContainerUsers'.
func validateContainers(c *Config, p *plan) []error {
	errs := containers.ValidateRegistries(c.ContainerRegistries)
	for i, ct := range c.Containers {
		if msg := p.containerUser(ct); msg != "" {
			errs = append(errs, fmt.Errorf("containers[%d]: %s", i, msg))
		}
	}
	return errs
}

// groupContainerUsers is validateContainers' user check of the
// containers the groups bring, in the merged plan, naming the group.
func (p *plan) groupContainerUsers() []error {
	var errs []error
	for i, ct := range p.Containers {
		o := p.origins["containers"][i]
		if o.group == "" {
			continue
		}
		msg := p.containerUser(ct)
		if msg == "" {
			continue
		}
		if v := p.fieldVariable(o, "containers", "user"); v != "" {
			// the site's appliance named the user: its role would run podman
			// as a user no role made
			o.variable = v
			msg = fmt.Sprintf("user %q is made by neither %s nor %s (the site's appliance would run podman as a user that does not exist)",
				ct.User, packagesets.AppliancePodmanUsers().Var, packagesets.ApplianceLocalUsers().Var)
		}
		errs = append(errs, fmt.Errorf("%s: containers image %s: %s", o, ct.Image, msg))
	}
	return errs
}

// containerUser is the problem with ct's user, "" when none: neither
// root nor a user this run creates nor, with the site's appliance, the
// login user its Ansible runs as (the mysql, opensearch and filebeat
// roles' own default, `{{ ansible_user }}`); a user name that is none is
// the kind's to refuse.
func (p *plan) containerUser(ct containers.Container) string {
	u := ct.UserOrRoot()
	if u == "root" || !containers.ValidUser(u) || p.appliance != nil && u == p.appliance.loginUser {
		return ""
	}
	for _, pu := range p.users {
		if pu.Name == u {
			return ""
		}
	}
	return fmt.Sprintf("user %q is neither root nor a user this run creates (add it to users, or a group that has it)", ct.User)
}
