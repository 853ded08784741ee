package fatimage

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// validateSBOM checks sbom_output, previous_manifest and
// change_report_output (no network: a URL is only parsed).
func validateSBOM(c *Config, _ *plan) []error {
	var errs problems
	for _, o := range []struct{ name, path string }{{"sbom_output", c.SBOMOutput}, {"change_report_output", c.ChangeReportOutput}} {
		if o.path == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(o.path)); err != nil || !st.IsDir() {
			errs.add("%s: the directory of %q does not exist", o.name, o.path)
		}
		if st, err := os.Stat(o.path); err == nil && st.IsDir() {
			errs.add("%s: %q is a directory", o.name, o.path)
		}
	}
	if c.ChangeReportOutput != "" && reportJSONPath(c.ChangeReportOutput) == c.ChangeReportOutput {
		errs.add("change_report_output: %q ends in .json, where the JSON report goes: name the Markdown file (.md)", c.ChangeReportOutput)
	}
	if p := c.PreviousManifest; strings.Contains(p, "://") {
		if u, err := url.Parse(p); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs.add("previous_manifest: %q is neither a local path nor an http(s) URL", p)
		}
	}
	return errs
}
