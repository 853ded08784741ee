package openstack

import (
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// A template in HCL decodes through ConfigSpec, blocks included, the way
// Packer hands it to the plugin.
func TestConfigSpecDecodesHCL(t *testing.T) {
	clearOSEnv(t)
	src := `
identity_endpoint = "https://keystone.example:5000/v3"
username = "u"
password = "hcl-pw-8e2d"
tenant_name = "t"
domain_name = "Default"
flavor = "m1.large"
image_name = "rocky-fat"
ssh_username = "rocky"
ssh_bastion_host = "bastion.example"
ssh_bastion_username = "jump"
ssh_bastion_agent_auth = true
use_blockstorage_volume = true
volume_size = 20
image_disk_format = "raw"
image_properties = { hw_firmware_type = "uefi" }
skip_inherited_properties = ["signature_verified", "owner_specified.openstack.sha256"]
state_timeout = "15m"
image_protected = true
source_image_filter {
  filters {
    name = "Rocky-9-GenericCloud"
    tags = ["base"]
    properties = { os_version = "9" }
  }
  most_recent = true
}
`
	f, diags := hclparse.NewParser().ParseHCL([]byte(src), "t.pkr.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	b := &Builder{}
	val, diags := hcldec.Decode(f.Body, b.ConfigSpec(), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, _, err := b.Prepare(val); err != nil {
		t.Fatal(err)
	}
	c := &b.config
	if !c.SourceImageFilters.MostRecent || c.SourceImageFilters.Filters.Name != "Rocky-9-GenericCloud" || c.SourceImageFilters.Filters.Properties["os_version"] != "9" {
		t.Errorf("source_image_filter %+v", c.SourceImageFilters)
	}
	if c.StateTimeout != 15*time.Minute || c.ImageProperties["hw_firmware_type"] != "uefi" || len(c.SkipInheritedProperties) != 2 || !c.ImageProtected {
		t.Errorf("config %+v", c.ImageConfig)
	}
	if c.Comm.SSHBastionHost != "bastion.example" || !c.Comm.SSHBastionAgentAuth {
		t.Errorf("bastion %q", c.Comm.SSHBastionHost)
	}
}
