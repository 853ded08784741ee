//go:generate packer-sdc mapstructure-to-hcl2 -type Config
//go:generate packer-sdc struct-markdown

package openstack

import (
	"fmt"

	"github.com/hashicorp/packer-plugin-sdk/common"
	"github.com/hashicorp/packer-plugin-sdk/packer"
	"github.com/hashicorp/packer-plugin-sdk/template/config"
	"github.com/hashicorp/packer-plugin-sdk/template/interpolate"
	"github.com/hashicorp/packer-plugin-sdk/uuid"

	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
)

// BuildIDKey is the metadata key (server, volume) and image property that
// carries the build's id, so leftovers can be traced to a build.
const BuildIDKey = "fatimage_build_id"

// Config is the `fatimage-openstack` builder's configuration.
type Config struct {
	common.PackerConfig `mapstructure:",squash"`
	AccessConfig        `mapstructure:",squash"`
	ImageConfig         `mapstructure:",squash"`
	RunConfig           `mapstructure:",squash"`

	ctx interpolate.Context
	// buildID is unique per build and appears in every resource's name,
	// description or metadata.
	buildID string
}

// Prepare decodes and checks the configuration without any network call.
func (c *Config) Prepare(raws ...any) ([]string, error) {
	err := config.Decode(c, &config.DecodeOpts{
		PluginType:         BuilderID,
		Interpolate:        true,
		InterpolateContext: &c.ctx,
		InterpolateFilter: &interpolate.RenderFilter{
			Exclude: []string{"ssh_private_key_file"},
		},
	}, raws...)
	if err != nil {
		return nil, err
	}
	c.buildID = uuid.TimeOrderedUUID()
	c.RunConfig.buildName = "packer_" + c.buildID
	if c.InstanceName == "" {
		// As the official builder: the build VM's name, and so its
		// hostname, is the image's; sweeps find build VMs by it.
		c.InstanceName = c.ImageName
	}
	if c.InstanceName == "" {
		c.InstanceName = c.RunConfig.buildName
	}
	if c.VolumeName == "" && c.UseBlockStorageVolume {
		c.VolumeName = c.ImageName
	}

	var errs *packer.MultiError
	errs = packer.MultiErrorAppend(errs, c.AccessConfig.Prepare()...)
	errs = packer.MultiErrorAppend(errs, c.ImageConfig.Prepare(c.UseBlockStorageVolume)...)
	errs = packer.MultiErrorAppend(errs, c.RunConfig.Prepare(&c.ctx)...)
	inputErrs, inputWarns := c.checkInputs()
	errs = packer.MultiErrorAppend(errs, inputErrs...)
	// Registered even when the configuration is invalid: the errors may
	// be logged next to the values.
	redact.Add(c.secrets()...)
	redact.Add(c.Comm.SSHPassword, c.Comm.WinRMPassword)
	if errs != nil && len(errs.Errors) > 0 {
		return nil, errs
	}
	warns := append(append(append([]string(nil), c.ImageConfig.warns...), c.RunConfig.warns...), inputWarns...)
	if c.OpenstackProvider != "" {
		warns = append(warns, fmt.Sprintf("openstack_provider = %q is accepted for compatibility and ignored", c.OpenstackProvider))
	}
	return warns, nil
}
