// Package version holds the plugin's version, set at release time through
// ldflags (-X .../version.Version=1.2.3 -X .../version.VersionPrerelease=).
package version

import "github.com/hashicorp/packer-plugin-sdk/version"

var (
	// Version is the main version number of the plugin.
	Version = "0.1.0"
	// VersionPrerelease marks a pre-release ("dev" for local builds); empty
	// for a release.
	VersionPrerelease = "dev"
	// VersionMetadata is optional build metadata (the part after "+").
	VersionMetadata = ""
	// PluginVersion is what `describe` reports to Packer.
	PluginVersion = version.NewPluginVersion(Version, VersionPrerelease, VersionMetadata)
)
