package openstack

import (
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
)

// zeroDiskWarning explains what happens to a flavor without a root disk
// when the build does not boot from its own volume. As the official
// builder, the build lets Nova decide: Nova refuses such an image-backed
// boot to non-admins (zero_disk_flavor policy) and gives an admin's server
// a local root disk the size of the image, whose snapshot is a normal
// image.
func zeroDiskWarning(c *Config, f *flavors.Flavor) string {
	if f.Disk != 0 || c.UseBlockStorageVolume {
		return ""
	}
	return fmt.Sprintf("Warning: flavor %s has a 0 GB root disk: Nova boots it from the image only for admins "+
		"(others get \"Only volume-backed servers are allowed for flavors with zero disk\"), with a root disk "+
		"the size of the image; set use_blockstorage_volume = true (with volume_size) to build on a volume", f.Name)
}
