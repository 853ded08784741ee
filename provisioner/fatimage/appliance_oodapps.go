package fatimage

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/git"
)

// oodAppsVar is the appliance's mapping of the Open OnDemand apps osc.ood
// installs (name: repo, version, dest).
const oodAppsVar = "ood_install_apps"

// oodAppsDir is where osc.ood puts the apps (its ood_sys_app_dir).
const oodAppsDir = "/var/www/ood/apps/sys"

// oodAppsNotInstalled is the warning for the apps the site's
// ood_install_apps names that the plan installs no checkout of (the
// built-in group knows jupyter, rstudio and codeserver): "" when none.
func oodAppsNotInstalled(res *appliance.Result, p *plan) string {
	if !p.hasBuiltin("openondemand") {
		return ""
	}
	apps, _ := res.Values[""][oodAppsVar].Value.(map[string]any)
	var missing []string
	for _, name := range slices.Sorted(maps.Keys(apps)) {
		dest := path.Join(oodAppsDir, name)
		if d, ok := apps[name].(map[string]any)["dest"].(string); ok && d != "" {
			dest = path.Join(d, name)
		}
		if !slices.ContainsFunc(p.GitCheckouts, func(g git.GitCheckout) bool { return path.Clean(g.Destination) == dest }) {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("WARNING: appliance: %s names %s, which the openondemand group does not install (it knows jupyter, rstudio and codeserver): give each as a git_checkouts entry with destination %s/<name>",
		oodAppsVar, strings.Join(missing, ", "), oodAppsDir)
}
