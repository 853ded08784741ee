package fatimage

import (
	"fmt"
	"regexp"
	"slices"
)

// SELinux as the appliance sets it: bootstrap.yml's play for hosts in
// its `selinux` group sets selinux_state with selinux_policy
// (ansible.posix.selinux); a host outside the group keeps its mode.
// With the site's appliance the run's plan takes both from the site;
// without one, the `selinux` option decides.
const (
	selinuxGroup     = "selinux"
	selinuxStateVar  = "selinux_state"
	selinuxPolicyVar = "selinux_policy"
)

// selinuxPolicyName is a policy as /etc/selinux/<name> holds it.
var selinuxPolicyName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// selinuxMode is the SELinux of the image: state "unchanged" leaves it
// alone; policy "" keeps the configured policy.
type selinuxMode struct {
	state, policy string
	// fromSite: state and policy are the site's selinux_state and
	// selinux_policy.
	fromSite bool
}

// selinux is the build host's SELinux as the site's appliance sets it.
func (av *applianceValues) selinux() (selinuxMode, error) {
	if !slices.Contains(av.groups, selinuxGroup) {
		return selinuxMode{state: "unchanged"}, nil
	}
	state, err := av.selinuxVar(selinuxStateVar, true)
	if err != nil {
		return selinuxMode{state: "unchanged"}, err
	}
	switch state {
	case "enforcing", "permissive", "disabled":
	default:
		return selinuxMode{state: "unchanged"}, fmt.Errorf("the site's appliance: %s: %q is not one of enforcing, permissive, disabled (ansible.posix.selinux's states)", selinuxStateVar, state)
	}
	// the module needs a policy unless the state is disabled
	policy, err := av.selinuxVar(selinuxPolicyVar, state != "disabled")
	if err != nil {
		return selinuxMode{state: "unchanged"}, err
	}
	if policy != "" && !selinuxPolicyName.MatchString(policy) {
		return selinuxMode{state: "unchanged"}, fmt.Errorf("the site's appliance: %s: %q is not a policy name (a directory of /etc/selinux)", selinuxPolicyVar, policy)
	}
	return selinuxMode{state: state, policy: policy, fromSite: true}, nil
}

// selinuxVar is one of the play's variables as one string; "" when not
// required and undefined or empty.
func (av *applianceValues) selinuxVar(name string, required bool) (string, error) {
	v, defined, err := av.single(name)
	switch {
	case err != nil:
		return "", fmt.Errorf("the site's appliance: %s: %v", name, err)
	case required && (!defined || v == ""):
		return "", fmt.Errorf("the site's appliance: %s: not defined, and the build host is in the %s group, whose play sets it", name, selinuxGroup)
	}
	return v, nil
}

// record is image.json's record of the site's SELinux values (in
// appliance.from_appliance); none when they are not the site's.
func (m selinuxMode) record() []imageApplianceValue {
	if !m.fromSite {
		return nil
	}
	out := []imageApplianceValue{{Group: selinuxGroup, Into: "selinux", Variable: selinuxStateVar, Values: []string{m.state}}}
	if m.policy != "" {
		out = append(out, imageApplianceValue{Group: selinuxGroup, Into: "selinux/policy", Variable: selinuxPolicyVar, Values: []string{m.policy}})
	}
	return out
}
