package fatimage

import (
	"fmt"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// The points of a build where the steps of the site's fatimage.yml that
// the plugin does not do natively run through Ansible, each after the
// native steps doing the same part of fatimage.yml (steps.go):
//
//   - pre: what fatimage.yml runs before importing bootstrap.yml (the
//     environment's hooks/pre.yml among it), after connect, before repos;
//   - bootstrap: bootstrap.yml, the doca play and hooks/post-bootstrap.yml,
//     after the native repositories, packages, reboot and doca;
//   - install: everything after hooks/post-bootstrap.yml (the installs,
//     hooks/post-filesystems.yml, hooks/post.yml, final.yml), after every
//     native install step, before cleanup.
const (
	phasePre       = "pre"
	phaseBootstrap = "bootstrap"
	phaseInstall   = "install"
)

// applianceStep is one step of the site's fatimage.yml as this build
// does it.
type applianceStep struct {
	appliance.Step
	phase string
	// native says what does the step natively ("group openhpc", "step
	// repos", "nothing to do: ..."); "" when it runs through Ansible, and
	// why then says why.
	native, why string
}

// inHook is a step of an environment hook: the hook runs as a whole.
func (st applianceStep) inHook() bool { return st.Hook != "" && st.Kind != "hook" }

// applianceSteps places each step of fatimage.yml in its phase and says
// what does it, given which built-in groups the build installs.
func applianceSteps(steps []appliance.Step, built func(group string) bool) []applianceStep {
	phase, postBootstrap := phasePre, false
	var out []applianceStep
	for _, st := range steps {
		if phase == phasePre && st.File == "ansible/bootstrap.yml" {
			phase = phaseBootstrap
		}
		if postBootstrap && st.Hook != "post-bootstrap" {
			phase = phaseInstall
		}
		if st.Kind == "hook" && st.Hook == "post-bootstrap" {
			postBootstrap = true
		}
		a := applianceStep{Step: st, phase: phase}
		a.native, a.why = nativeOf(st, built)
		out = append(out, a)
	}
	return out
}

// nativeOf says what does the step natively (internal/packagesets'
// native.yaml), or why the step runs through Ansible.
func nativeOf(st appliance.Step, built func(group string) bool) (native, why string) {
	if st.Hook != "" {
		return "", "the environment's hook"
	}
	row, ok := packagesets.NativeFor(st.Keys())
	switch {
	case !ok:
		return "", "the plugin does not implement it"
	case row.None != "":
		return "nothing to do: " + row.None, ""
	case len(row.Steps) > 0:
		return "step " + strings.Join(row.Steps, ", "), ""
	}
	for _, g := range row.Groups {
		if built(g) {
			return "group " + g, ""
		}
	}
	if r := packagesets.SiteRole(row.Groups[0]); r != "" {
		return "", fmt.Sprintf("with the site's appliance its role %s does group %s's work: it builds from the build VM's own state", r, row.Groups[0])
	}
	return "", fmt.Sprintf("the plugin does it in group %s, which this build does not install", strings.Join(row.Groups, " or "))
}
