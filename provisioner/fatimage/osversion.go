package fatimage

import (
	"bufio"
	"fmt"
	"slices"
	"strings"
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
