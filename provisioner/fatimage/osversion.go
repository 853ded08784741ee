package fatimage

import (
	"bufio"
	"fmt"
	"slices"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// osReleaseCommand reads the build VM's OS release; Go parses it.
const osReleaseCommand = "cat /etc/os-release"

// osReleaseVersion is VERSION_ID of an os-release file ("" when absent).
func osReleaseVersion(osRelease string) string {
	sc := bufio.NewScanner(strings.NewReader(osRelease))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "VERSION_ID="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

// reposOSVersions are the distinct OS versions the repositories say
// they are for, in order; hand-written entries without one say nothing.
func reposOSVersions(repos []Repo) []string {
	var out []string
	for _, r := range repos {
		if r.OSVersion != "" && !slices.Contains(out, r.OSVersion) {
			out = append(out, r.OSVersion)
		}
	}
	return out
}

// checkOSVersion compares the build VM's VERSION_ID with the
// repositories' OS versions: another major is an error naming both (its
// packages would not install, or would install what the other major
// needs), another minor a warning (the update moves the VM to the
// repositories' minor, which may not be what the image was meant to
// be). A version given by its major only ("9") matches every minor.
func checkOSVersion(vm string, repos []Repo) (warnings []string, err error) {
	vmMajor, _, _ := strings.Cut(vm, ".")
	for _, want := range reposOSVersions(repos) {
		major, minor, hasMinor := strings.Cut(want, ".")
		names := reposFor(repos, want)
		switch {
		case major != vmMajor:
			return nil, fmt.Errorf("repos: the repositories (%s) are for Rocky %s (the fatimage-ark data source's os_version), "+
				"but the build VM runs %s (VERSION_ID in its /etc/os-release): use a Rocky %s source image, or set os_version to the image's", names, want, vm, major)
		case hasMinor && vm != major+"."+minor:
			warnings = append(warnings, fmt.Sprintf("WARNING: the repositories (%s) are for Rocky %s, but the build VM runs %s (VERSION_ID in its /etc/os-release): "+
				"the update moves it to %s's packages", names, want, vm, want))
		}
	}
	return warnings, nil
}

// reposFor names the repositories for OS version v.
func reposFor(repos []Repo, v string) string {
	var names []string
	for _, r := range repos {
		if r.OSVersion == v {
			names = append(names, r.Name)
		}
	}
	return strings.Join(names, ", ")
}

// majorFor is the Rocky major the groups are resolved for (their
// per_major values): the build VM's when read (vm), else its facts' (the
// site's appliance), else the repositories' os_version's; "" when none
// says, and the groups' own data (RL9) is assumed until the step connect
// reads the VM's.
func (p *plan) majorFor(vm string) string {
	if vm != "" {
		return vm
	}
	if p.appliance != nil {
		if v, defined, err := p.appliance.look.Value("", factMajor); err == nil && defined && fmt.Sprint(v) != "" {
			return fmt.Sprint(v)
		}
	}
	if vs := reposOSVersions(p.repos); len(vs) > 0 {
		major, _, _ := strings.Cut(vs[0], ".")
		return major
	}
	return ""
}

// planForVM makes the run's plan for the build VM's Rocky major (VERSION_ID
// vm) when Prepare could only assume the groups' own, RL9.
func (s *state) planForVM(vm string) error {
	major, _, _ := strings.Cut(vm, ".")
	if major == "" || major == packagesets.DataMajor {
		return nil
	}
	p, err := s.replan(s.plan.appliance, major)
	if err != nil {
		return fmt.Errorf("the plan for the build VM's Rocky %s: %w", vm, err)
	}
	s.plan = p
	s.say(fmt.Sprintf("the build VM runs Rocky %s: the groups' values for Rocky %s", vm, major))
	return nil
}
