// Command packer-plugin-fatimage is a Packer plugin that builds "fat" Rocky
// Linux images for Slurm clusters on OpenStack from pinned Pulp snapshots.
package main

import (
	"fmt"
	"log"
	"os"

	"github.com/hashicorp/packer-plugin-sdk/plugin"

	"github.com/stackhpc/packer-plugin-fatimage/builder/openstack"
	"github.com/stackhpc/packer-plugin-fatimage/datasource/ark"
	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
	"github.com/stackhpc/packer-plugin-fatimage/provisioner/fatimage"
	"github.com/stackhpc/packer-plugin-fatimage/version"
)

func main() {
	// Packer copies a plugin's stderr into PACKER_LOG; its own secret
	// filter knows none of the plugin's secrets, so the plugin filters.
	log.SetOutput(redact.Writer(os.Stderr))
	pps := plugin.NewSet()
	pps.RegisterBuilder("openstack", new(openstack.Builder))
	pps.RegisterProvisioner(plugin.DEFAULT_NAME, new(fatimage.Provisioner))
	pps.RegisterDatasource("ark", new(ark.Datasource))
	pps.SetVersion(version.PluginVersion)
	if err := pps.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err.Error())
		os.Exit(1)
	}
}
