package fatimage

import (
	"fmt"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/python"
)

// Validation of the content kinds (git_checkouts, downloads, python_envs,
// ...): what they share and the entry in validators; each
// kind's own checks are next to its type in content_<kind>.go.

func validateContentSource(s string) []error {
	switch s {
	case "", "vm", "host":
		return nil
	}
	return []error{fmt.Errorf("content_source: %q is not one of vm, host", s)}
}

// checkHTTPURL reports what is wrong with an item's http(s) URL field,
// "" when nothing (checkURL, validate_urls.go).
func checkHTTPURL(field, s string) string { return checkURL(field, s) }

// validateContent checks the template's content options; its items are
// checked as a group's are (checkContent).
func validateContent(c *Config, p *plan) []error {
	errs := validateContentSource(c.ContentSource)
	errs = append(errs, c.templateContent().check(c.contentSource())...)
	errs = append(errs, validateGrafanaPins(c, p)...)
	if c.GrafanaDashboardsURL != "" {
		if msg := checkHTTPURL("grafana_dashboards_url", c.GrafanaDashboardsURL); msg != "" {
			errs = append(errs, fmt.Errorf("%s", msg))
		}
	}
	if c.NetlibURL != "" {
		if msg := checkHTTPURL("netlib_url", c.NetlibURL); msg != "" {
			errs = append(errs, fmt.Errorf("%s", msg))
		}
	}
	return errs
}

// check checks content items on their own, whoever wrote them (the
// template or a group); source is who fetches them (vm or host). Files
// and GPG keys have their own validators (validateFiles,
// validateGPGKeys).
func (ci *ContentOptions) check(source string) []error {
	errs := python.CheckSource(ci.PythonEnvs, source)
	for _, k := range contentKinds() {
		errs = append(errs, k.check(ci)...)
	}
	return append(errs, validateDestinations(ci)...)
}

// validateDestinations refuses two items writing the same path.
func validateDestinations(c *ContentOptions) []error {
	var errs []error
	seen := map[string]string{}
	claim := func(what, dst string) {
		if dst == "" {
			return
		}
		if o, ok := seen[dst]; ok {
			errs = append(errs, fmt.Errorf("%s: destination %s is also %s's", what, dst, o))
			return
		}
		seen[dst] = what
	}
	for i, g := range c.GitCheckouts {
		claim(fmt.Sprintf("git_checkouts[%d]", i), g.Destination)
	}
	for i, d := range c.Downloads {
		claim(fmt.Sprintf("downloads[%d]", i), d.Destination)
	}
	for i, e := range c.PythonEnvs {
		if !e.System {
			claim(fmt.Sprintf("python_envs[%d]", i), e.Path)
		}
	}
	for i, d := range c.GrafanaDashboards {
		claim(fmt.Sprintf("grafana_dashboards[%d]", i), d.Destination())
	}
	return errs
}
