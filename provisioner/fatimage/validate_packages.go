package fatimage

import (
	"regexp"
	"strings"
)

var (
	rePkg = regexp.MustCompile(`^@?[A-Za-z0-9_.+:*-][A-Za-z0-9_.+:*/ -]*$`)
	// name:stream, optionally /profile
	reModuleStream = regexp.MustCompile(`^[A-Za-z0-9_.+-]+(:[A-Za-z0-9_.+-]+)?(/[A-Za-z0-9_.+-]+)?$`)
	// grafana-cli plugin ids and versions
	reGrafanaPlugin = regexp.MustCompile(`^[a-z0-9][a-z0-9-]* [0-9][0-9A-Za-z.+-]*$`)
)

// validatePackages checks package names, module streams, Grafana
// plugins and services.
func validatePackages(c *Config, p *plan) []error {
	var errs problems
	checkPkgs := func(field string, l []string) {
		for i, p := range l {
			if !rePkg.MatchString(p) || strings.HasPrefix(p, "-") {
				errs.add("%s[%d]: %q is not a valid package name or spec", field, i, p)
			} else if msg := globProblem(field, p); msg != "" {
				errs.add("%s[%d]: %q %s", field, i, p, msg)
			}
		}
	}
	checkPkgs("packages", c.Packages)
	checkPkgs("remove_packages", c.RemovePackages)
	checkPkgs("exclude", c.Exclude)
	for i, m := range c.ModuleStreams {
		if !reModuleStream.MatchString(m) {
			errs.add("module_streams[%d]: %q must be name:stream", i, m)
		}
	}
	checkPkgs("update_exclude", c.UpdateExclude)
	for i, gp := range c.GrafanaPlugins {
		if !reGrafanaPlugin.MatchString(gp) {
			errs.add("grafana_plugins[%d]: %q must be \"<plugin id> <version>\"", i, gp)
		}
	}
	for _, a := range p.sets.applied { // the site's, as its appliance gave them
		for _, gp := range a.Values {
			if a.Into == "grafana_plugins" && !reGrafanaPlugin.MatchString(gp) {
				errs.add("group %q (the appliance's %s): %q must be \"<plugin id> <version>\" (the plugin installs pinned versions)", a.Group, a.Var, gp)
			}
		}
	}
	for i, s := range c.DisableServices {
		if !reSection.MatchString(s) {
			errs.add("disable_services[%d]: %q is not a valid unit name", i, s)
		}
	}
	return errs
}

// globProblem is the problem with a glob in a package spec of field, ""
// when none. A spec of wildcards alone matches every package (remove_packages
// = ["*"] removes the system); packages and remove_packages take no glob
// at all: what one matches changes with the snapshot. exclude and
// update_exclude may hold one back by pattern (kernel*), as dnf's exclude
// does.
func globProblem(field, spec string) string {
	if !strings.ContainsAny(spec, "*?[") {
		return ""
	}
	if strings.Trim(strings.TrimPrefix(spec, "@"), "*?[]") == "" {
		return "matches every package"
	}
	switch field {
	case "packages", "remove_packages":
		return "is a glob: name the packages (what a glob matches changes with the snapshot, and a removal by pattern can take what the image needs)"
	}
	return ""
}
